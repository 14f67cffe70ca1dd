"""Collecting one Generation: calls go to a real fake provider on 127.0.0.1; the service is called directly."""

import json
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from llm_collect import services
from llm_collect.calls.config import retry_delay
from llm_collect.calls.states import claim
from llm_collect.models import Generation
from surveys.models import Answer
from surveys.services.snapshots import write_snapshot
from tests.fakes.llm_servers import FakeLLMServer, answer_json

from .conftest import make_llm_study


def generations(study, samples=1, **kwargs):
    run = services.start_collection(study=study, samples=samples, **kwargs)
    return run, list(Generation.objects.filter(run=run).order_by("sample", "vignette__position", "system__position"))


def collect_until_settled(gen, limit=10):
    """Deliver the task again and again, as Celery's retries would, until the row settles."""
    for _ in range(limit):
        try:
            return services.collect(generation_id=gen.pk)
        except services.TryAgain:
            continue
    raise AssertionError("never settled")


@pytest.mark.django_db
@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini", "openai-compatible"])
def test_a_normal_reply_becomes_a_selected_llm_answer_for_each_wire_format(fake, provider):
    study = make_llm_study(url=fake.url, providers=[provider], vignettes=1)
    _, (gen,) = generations(study)
    assert services.collect(generation_id=gen.pk) == Generation.Status.DONE
    gen.refresh_from_db()
    answer = gen.answer
    assert answer.origin == Answer.Origin.LLM
    assert answer.sample == 1
    assert answer.selected
    assert [f.weight for f in answer.features.all()] == [50, 30, 20]
    assert answer.raw_text == gen.raw_text
    assert (gen.input_tokens, gen.output_tokens, gen.attempts) == (400, 200, 1)
    assert gen.model_version.endswith("-2024-08-06")
    assert gen.finish_reason in ("stop", "end_turn", "STOP")
    assert gen.latency_ms is not None
    assert gen.cost_estimate > 0
    assert gen.raw_response
    assert gen.raw_request
    assert "sk-test" not in json.dumps(gen.raw_request)
    assert "Sam1" in json.dumps(gen.raw_request)  # {character_name} filled in


@pytest.mark.django_db
def test_a_second_delivery_of_a_finished_generation_is_a_noop_and_costs_nothing(fake):
    study = make_llm_study(url=fake.url, vignettes=1)
    _, (gen,) = generations(study)
    services.collect(generation_id=gen.pk)
    assert services.collect(generation_id=gen.pk) == "skipped"
    assert len(fake.requests) == 1
    assert Answer.objects.filter(system=gen.system, vignette=gen.vignette).count() == 1


@pytest.mark.django_db
def test_429_with_retry_after_puts_the_row_back_and_asks_the_task_to_wait():
    with FakeLLMServer(script=[{"status": 429, "retry_after": 60}]) as server:
        study = make_llm_study(url=server.url, vignettes=1)
        _, (gen,) = generations(study)
        with pytest.raises(services.TryAgain) as caught:
            services.collect(generation_id=gen.pk)
        assert caught.value.retry_after == 60
        assert retry_delay(retries=0, retry_after=60, backoff=True) >= 60
        gen.refresh_from_db()
        assert gen.status == Generation.Status.PENDING
        assert "429" in gen.error
        # The 429 pushed the provider's next slot a minute away for every worker: the next delivery
        # does not call, it asks to be run again when the slot comes.
        with pytest.raises(services.TryAgain) as again:
            services.collect(generation_id=gen.pk)
        assert 50 < again.value.retry_after <= 60
        assert len(server.requests) == 1


@pytest.mark.django_db
def test_500_is_retried_then_succeeds_with_one_answer():
    with FakeLLMServer(script=[{"status": 500}, {"status": 503}]) as server:
        study = make_llm_study(url=server.url, vignettes=1)
        _, (gen,) = generations(study)
        assert collect_until_settled(gen) == Generation.Status.DONE
    gen.refresh_from_db()
    assert gen.attempts == 3
    assert [h["outcome"] for h in gen.history] == ["retryable error", "retryable error", "answer stored"]
    assert Answer.objects.filter(system=gen.system).count() == 1


@pytest.mark.django_db
def test_a_provider_that_keeps_failing_is_given_up_after_the_attempts_cap():
    with FakeLLMServer(default={"status": 500}) as server:
        study = make_llm_study(url=server.url, vignettes=1)
        _, (gen,) = generations(study)
        assert collect_until_settled(gen) == Generation.Status.FAILED
        assert len(server.requests) == services.call_settings()["max_attempts"]
    gen.refresh_from_db()
    assert "gave up" in gen.error
    assert gen.answer is None


@pytest.mark.django_db
def test_a_timeout_is_retried():
    with FakeLLMServer(script=[{"sleep": 4}]) as server:
        study = make_llm_study(url=server.url, vignettes=1, parameters={"timeout": 1.5})
        _, (gen,) = generations(study)
        with pytest.raises(services.TryAgain, match="Timed out"):
            services.collect(generation_id=gen.pk)
        assert services.collect(generation_id=gen.pk) == Generation.Status.DONE


@pytest.mark.django_db
def test_a_permanent_error_fails_the_row_without_retrying():
    with FakeLLMServer(script=[{"status": 401}]) as server:
        study = make_llm_study(url=server.url, vignettes=1)
        _, (gen,) = generations(study)
        assert services.collect(generation_id=gen.pk) == Generation.Status.FAILED
        assert services.collect(generation_id=gen.pk) == "skipped"
        assert len(server.requests) == 1


@pytest.mark.django_db
def test_malformed_json_is_stored_with_its_error_asked_again_then_flagged_invalid():
    with FakeLLMServer(default={"text": '{"features": [{"feature": "honesty", "weight": 60'}) as server:
        study = make_llm_study(url=server.url, vignettes=1)
        _, (gen,) = generations(study)
        assert collect_until_settled(gen) == Generation.Status.INVALID
        assert len(server.requests) == services.call_settings()["max_invalid_attempts"]
    gen.refresh_from_db()
    assert gen.raw_text.startswith('{"features"')
    assert "no JSON object" in gen.parse_error
    assert gen.answer is None
    assert not Answer.objects.filter(system=gen.system).exists()
    assert gen.input_tokens == 400 * 3  # every paid attempt is counted


@pytest.mark.django_db
def test_malformed_output_then_a_good_one_stores_the_good_one():
    with FakeLLMServer(script=[{"text": "I would rather not answer in JSON."}]) as server:
        study = make_llm_study(url=server.url, vignettes=1)
        _, (gen,) = generations(study)
        assert collect_until_settled(gen) == Generation.Status.DONE
    gen.refresh_from_db()
    assert gen.history[0]["outcome"] == "invalid output"
    assert gen.parse_error == ""


@pytest.mark.django_db
def test_weights_that_do_not_add_up_are_normalised_and_the_original_weights_kept():
    with FakeLLMServer(default={"text": answer_json(1, weights=(3, 2, 1))}) as server:
        study = make_llm_study(url=server.url, vignettes=1)
        _, (gen,) = generations(study)
        assert services.collect(generation_id=gen.pk) == Generation.Status.DONE
    gen.refresh_from_db()
    assert gen.normalised is True
    assert gen.original_weights == [3, 2, 1]
    assert [f.weight for f in gen.answer.features.all()] == [50, 33, 17]


@pytest.mark.django_db
def test_a_worker_stopped_mid_call_and_the_task_delivered_again_stores_exactly_one_sample(fake):
    study = make_llm_study(url=fake.url, vignettes=1)
    _, (gen,) = generations(study)
    # The first worker claims the row and is killed while its call is in flight: the row stays RUNNING.
    dead_token = claim(gen, lease_seconds=300, max_attempts=5)
    assert dead_token
    # Redelivered while the lease runs: no second call, just "come back when the lease is over".
    with pytest.raises(services.TryAgain, match="held by another worker") as caught:
        services.collect(generation_id=gen.pk)
    assert 290 < caught.value.retry_after <= 301
    assert fake.requests == []
    # Redelivered after the lease ran out: this worker takes the row over and stores the answer.
    with time_machine.travel(timezone.now() + timedelta(seconds=301), tick=True):
        assert services.collect(generation_id=gen.pk) == Generation.Status.DONE
    # The first worker was only stalled and comes back with its reply: it can store nothing.
    gen.refresh_from_db()
    from llm_collect.client import Reply

    late = Reply(text=answer_json(9), raw={}, request={})
    assert services.record_reply(gen, dead_token, late) == "skipped"
    assert Answer.objects.filter(system=gen.system, vignette=gen.vignette).count() == 1
    assert len(fake.requests) == 1
    assert services.collect(generation_id=gen.pk) == "skipped"


@pytest.mark.django_db
def test_the_first_valid_sample_is_selected_even_when_a_later_one_finishes_first(fake):
    study = make_llm_study(url=fake.url, vignettes=1)
    _, gens = generations(study, samples=3)
    first, second, third = gens
    services.collect(generation_id=third.pk)
    services.collect(generation_id=second.pk)
    services.collect(generation_id=first.pk)
    selected = Answer.objects.get(system=first.system, selected=True)
    assert selected.sample == 1
    assert Answer.objects.filter(system=first.system).count() == 3


@pytest.mark.django_db
def test_a_researchers_choice_is_not_overridden_by_a_later_sample(fake, admin_user):
    from surveys.services.answer_records import select_answer

    study = make_llm_study(url=fake.url, vignettes=1)
    _, (first, second) = generations(study, samples=2)
    services.collect(generation_id=second.pk)
    select_answer(answer=Answer.objects.get(system=second.system, sample=2), user=admin_user)
    services.collect(generation_id=first.pk)
    assert Answer.objects.get(system=first.system, selected=True).sample == 2


@pytest.mark.django_db
def test_nothing_is_selected_automatically_once_the_study_is_live(fake):
    study = make_llm_study(url=fake.url, vignettes=1)
    _, (gen,) = generations(study)
    study.status, study.snapshot = "live", write_snapshot(study=study)  # as going live leaves it, minus the checks
    study.save()
    services.collect(generation_id=gen.pk)
    assert not Answer.objects.filter(system=gen.system, selected=True).exists()


@pytest.mark.django_db
def test_only_unusable_replies_count_toward_the_invalid_bound():
    with FakeLLMServer(script=[{"status": 500}, {"text": "no"}, {"text": "no"}]) as server:
        study = make_llm_study(url=server.url, vignettes=1)
        _, (gen,) = generations(study)
        assert collect_until_settled(gen) == Generation.Status.DONE
    gen.refresh_from_db()
    assert gen.attempts == 4


@pytest.mark.django_db
def test_without_a_broker_the_task_waits_in_process_instead_of_requeueing(settings):
    from llm_collect import tasks

    with FakeLLMServer(script=[{"status": 429, "retry_after": 0}, {"status": 500}]) as server:
        study = make_llm_study(url=server.url, vignettes=1)
        _, (gen,) = generations(study)
        settings.LLM_CALLS = {**settings.LLM_CALLS, "backoff_base_seconds": 0.01}
        assert tasks.collect.apply(args=(gen.pk,)).get() == Generation.Status.DONE
        assert len(server.requests) == 3


@pytest.mark.django_db
def test_a_row_waiting_too_long_for_a_rate_slot_is_given_back_uncounted(fake):
    from llm_collect import limits

    study = make_llm_study(url=fake.url, vignettes=1)
    _, (gen,) = generations(study)
    target = services.target_for(gen.system)
    limits.penalise(limits.limit_for(provider=target.provider, base_url=target.endpoint_base, parameters={}), 120)
    with pytest.raises(services.TryAgain):
        services.collect(generation_id=gen.pk)
    gen.refresh_from_db()
    assert (gen.status, gen.attempts, gen.claim) == (Generation.Status.PENDING, 0, "")
    assert fake.requests == []
