"""Every change of a Generation's status goes through states.move: the claim and the lease are cleared and one
history entry is appended, whichever way the attempt ended. And the lease is kept alive while a call runs."""

import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from llm_collect import limits, services
from llm_collect.calls.states import claim, move
from llm_collect.models import Generation
from surveys.models import Answer
from tests.fakes.llm_servers import FakeLLMServer

from .conftest import OwnRedis, make_llm_study, queued

BAD = {"text": "not JSON at all"}


def one_generation(url, slug="llm"):
    study = make_llm_study(url=url, slug=slug, vignettes=1)
    run = services.start_collection(study=study, samples=1)
    return Generation.objects.get(run=run)


def step(gen):
    try:
        return services.collect(generation_id=gen.pk)
    except services.TryAgain:
        return "try again"


def settled(gen, **expected):
    gen.refresh_from_db()
    assert gen.claim == ""
    assert gen.lease_expires_at is None
    for field, value in expected.items():
        assert getattr(gen, field) == value, field
    return gen


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("script", "settings_change", "returned", "status", "outcome"),
    [
        ([{}], {}, "done", "done", "answer stored"),
        ([{"status": 401}], {}, "failed", "failed", "permanent error"),
        ([{"status": 500}], {}, "try again", "pending", "retryable error"),
        ([{"status": 500}], {"max_attempts": 1}, "failed", "failed", "retryable error"),
        ([BAD], {}, "try again", "pending", "invalid output"),
        ([BAD], {"max_invalid_attempts": 1}, "invalid", "invalid", "invalid output"),
    ],
)
def test_each_end_of_an_attempt_appends_history_and_clears_the_claim(
    settings, script, settings_change, returned, status, outcome
):
    settings.LLM_CALLS = {**settings.LLM_CALLS, **settings_change}
    with FakeLLMServer(script=script) as server:
        gen = one_generation(server.url)
        assert step(gen) == returned
    gen = settled(gen, status=status)
    assert [entry["outcome"] for entry in gen.history] == [outcome]
    assert gen.history[0]["attempt"] == 1
    assert (gen.finished_at is not None) == (status != "pending")
    if status == "pending":
        assert gen.not_before is not None
        assert gen.not_before > timezone.now() - timedelta(seconds=1)


@pytest.mark.django_db
def test_a_row_given_back_uncalled_records_why_and_is_not_counted(fake):
    gen = one_generation(fake.url)
    target = services.target_for(gen.system)
    limits.penalise(limits.limit_for(provider=target.provider, base_url=target.endpoint_base, parameters={}), 120)
    assert step(gen) == "try again"
    gen = settled(gen, status="pending", attempts=0)
    assert gen.history[0]["outcome"].startswith("not called")
    assert fake.requests == []


@pytest.mark.django_db
def test_a_reply_that_cannot_be_stored_fails_the_row_and_frees_it(fake):
    gen = one_generation(fake.url)
    # Someone stored this sample by another route while the call ran.
    from surveys.services.answer_records import create_answer
    from surveys.services.answer_shape import FeatureIn

    features = [FeatureIn(feature="x", weight=100, reason="r")]
    create_answer(system=gen.system, vignette=gen.vignette, features=features, action="a", sample=gen.sample)
    assert step(gen) == "failed"
    gen = settled(gen, status="failed")
    assert gen.history[-1]["outcome"] == "not stored"  # the lease is cleared here too (it used to be kept)
    assert Answer.objects.filter(system=gen.system, vignette=gen.vignette).count() == 1


@pytest.mark.django_db
def test_giving_up_writes_history(fake, settings):
    gen = one_generation(fake.url)
    Generation.objects.filter(pk=gen.pk).update(attempts=services.call_settings()["max_attempts"])
    assert step(gen) == "failed"
    gen = settled(gen, status="failed")
    assert gen.history[-1]["outcome"] == "gave up"
    assert "Gave up after" in gen.error


@pytest.mark.django_db
def test_already_answered_and_asked_again_are_history_too(fake):
    gen = one_generation(fake.url)
    Generation.objects.filter(pk=gen.pk).update(status="failed")
    gen.refresh_from_db()
    assert services.retry_generations(generation_ids=[gen.pk]) == 1
    gen = settled(gen, status="pending", attempts=0)
    assert gen.history[-1]["outcome"] == "asked again"


@pytest.mark.django_db
def test_a_move_from_a_claim_another_worker_took_changes_nothing(fake):
    gen = one_generation(fake.url)
    token = claim(gen, lease_seconds=30, max_attempts=5)
    gen.refresh_from_db()
    assert move(gen, token="someone-else", to="done", event="answer stored") is False
    gen.refresh_from_db()
    assert (gen.status, gen.claim, gen.history) == ("running", token, [])


@pytest.mark.django_db
def test_a_pending_row_whose_retry_is_overdue_is_queued_again_once(fake, django_capture_on_commit_callbacks):
    gen = one_generation(fake.url)
    waiting = one_generation(fake.url, slug="other")  # a second study's row, its retry still ahead
    grace = services.call_settings()["sweep_grace_seconds"]
    Generation.objects.filter(pk=gen.pk).update(not_before=timezone.now() - timedelta(seconds=grace + 1))
    Generation.objects.filter(pk=waiting.pk).update(not_before=timezone.now() + timedelta(seconds=10))
    with django_capture_on_commit_callbacks() as callbacks:
        assert services.sweep_generations() == 1
    assert queued(callbacks) == [gen.pk]
    assert services.sweep_generations() == 0  # its new message waits in the broker now


@pytest.mark.django_db(transaction=True)
def test_the_lease_is_renewed_while_a_call_runs(settings):
    """Evidence is the lease moving forward during the call, read from the database, not a pause."""
    settings.LLM_CALLS = {**settings.LLM_CALLS, "lease_seconds": 0.6}
    in_call = threading.Event()
    with FakeLLMServer(script=[{"hold": in_call}]) as server:
        # Made directly: committing a run would run its task in-process at once (no broker in this test).
        study = make_llm_study(url=server.url, vignettes=1)
        gen = Generation.objects.create(system=study.systems.get(kind="llm"), vignette=study.vignettes.get(), sample=1)
        worker = threading.Thread(target=step, args=(gen,))
        worker.start()
        try:
            first = wait_for_value(lambda: Generation.objects.get(pk=gen.pk).lease_expires_at)
            renewed = wait_for_value(lambda: later_than(Generation.objects.get(pk=gen.pk).lease_expires_at, first))
            assert renewed > first
            # A second delivery finds the row held by the live worker and makes no call.
            with pytest.raises(services.TryAgain, match="held by another worker"):
                services.collect(generation_id=gen.pk)
        finally:
            in_call.set()
            worker.join(timeout=30)
    settled(gen, status="done")
    assert len(server.requests) == 1


def later_than(value, first):
    return value if value and value > first else None


def wait_for_value(read, timeout=20.0):
    deadline = time.monotonic() + timeout
    while (value := read()) is None:
        if time.monotonic() > deadline:
            pytest.fail("the value never came")
        time.sleep(0.05)
    return value


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_reply_paid_for_is_stored_when_redis_goes_away_during_the_call(settings):
    """Redis down as a call is in flight: the concurrency place cannot be given back, but the answer is kept,
    the lease is settled, and nothing is asked of the provider a second time."""
    released = threading.Event()
    with OwnRedis() as redis_server, FakeLLMServer(script=[{"hold": released}]) as server:
        settings.REDIS_URL = redis_server.url
        gen = one_generation(server.url)
        outcome = {}
        worker = threading.Thread(target=lambda: outcome.update(result=step(gen)))
        worker.start()
        deadline = time.monotonic() + 20
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        assert server.requests, "the call never reached the provider"
        redis_server.stop()
        released.set()
        worker.join(timeout=30)
    assert outcome == {"result": "done"}
    settled(gen, status="done")
    assert len(server.requests) == 1
    assert Answer.objects.filter(system=gen.system, vignette=gen.vignette).count() == 1
