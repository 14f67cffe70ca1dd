"""The broker down (issue 21.6): a run started while it is down is refused with nothing written (503 in the
admin), and rows whose messages it refused after a run started are sent again by the next sweep, within a
minute of its return rather than after sweep_minutes."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
import time_machine
from django.core.management import CommandError, call_command
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from llm_collect import services, tasks
from llm_collect.calls import queueing
from llm_collect.models import CollectionRun, Generation
from llm_judging.models import JudgeCall, JudgingRun
from tests.llm_judging.conftest import make_judge

from .conftest import OwnRedis, broker_at, free_port, make_llm_study, queued

REFUSED = "The task queue (the Celery broker, Redis) cannot be reached"


@pytest.mark.django_db
def test_starting_a_collection_with_the_broker_down_answers_503_and_writes_nothing(fake, admin_client, closed_broker):
    study = make_llm_study(url=fake.url, vignettes=2)
    response = admin_client.post(
        reverse("admin:llm_collect_collectionrun_start"),
        {"study": study.pk, "systems": "", "samples": 2, "confirmed": "yes"},
    )
    assert response.status_code == 503
    assert REFUSED in response.content.decode()
    assert not CollectionRun.objects.exists()
    assert not Generation.objects.exists()
    with pytest.raises(CommandError, match="cannot be reached"):
        call_command("collect_answers", study.slug)
    assert not Generation.objects.exists()


@pytest.mark.django_db
def test_starting_a_judging_run_with_the_broker_down_answers_503_and_writes_nothing(
    judged_study, fake, admin_client, closed_broker
):
    judge = make_judge(fake.url, study=judged_study)
    form = {"study": judged_study.pk, "judges": [judge.pk], "samples": 1, "orders": "both", "confirmed": "yes"}
    response = admin_client.post(reverse("admin:llm_judging_judgingrun_add"), form)
    assert response.status_code == 503
    assert REFUSED in response.content.decode()
    assert not JudgingRun.objects.exists()
    assert not JudgeCall.objects.exists()


@pytest.fixture
def judged_study(db):
    from tests.conftest import make_judged_study

    return make_judged_study(slug="outage", participants=2)


@pytest.mark.django_db
def test_rows_the_broker_refused_are_sent_again_by_the_first_sweep_after_the_grace(
    fake, closed_broker, django_capture_on_commit_callbacks
):
    study = make_llm_study(url=fake.url, vignettes=3)
    ids = Generation.objects.bulk_create(
        [Generation(system=study.systems.get(kind="llm"), vignette=v) for v in study.vignettes.all()]
    )
    ids = [gen.pk for gen in ids]
    queueing.send(tasks.collect, Generation, ids)  # the broker went down between the check and the commit
    assert all(gen.not_before is not None for gen in Generation.objects.all())
    grace = services.call_settings()["sweep_grace_seconds"]
    assert services.sweep_generations() == 0  # not before the grace: a message may still be on its way
    later = timezone.now() + timedelta(seconds=grace + 1)
    with time_machine.travel(later, tick=False), django_capture_on_commit_callbacks() as callbacks:
        assert services.sweep_generations() == 3
    assert sorted(queued(callbacks)) == sorted(ids)
    assert grace + 15 < 60  # picked up by the first sweep after the grace: within a minute, beat sweeps every 15 s


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_run_whose_broker_stops_before_its_messages_go_is_picked_up_when_redis_returns(fake, settings):
    """A real Redis as the broker, stopped between the run's check and its commit, then started again."""
    queue = "test-outage"
    settings.LLM_CALLS = {**settings.LLM_CALLS, "queue": queue}
    with OwnRedis() as redis_server, broker_at(redis_server.url):
        study = make_llm_study(url=fake.url, vignettes=2)
        with transaction.atomic():
            run = services.start_collection(study=study, samples=2)  # the broker answered the check
            redis_server.stop()  # … and is gone when the messages are sent on commit
        rows = Generation.objects.filter(run=run)
        assert rows.count() == 4
        assert rows.filter(not_before__isnull=False).count() == 4  # stamped for the sweep, not stranded
        redis_server.start()
        grace = services.call_settings()["sweep_grace_seconds"]
        with time_machine.travel(timezone.now() + timedelta(seconds=grace + 1), tick=False):
            assert services.sweep_generations() == 4
        assert redis_client(redis_server).llen(queue) == 4  # the messages are in the broker now
        assert rows.filter(not_before__isnull=True).count() == 4


def redis_client(server):
    import redis

    return redis.Redis.from_url(server.url)


class StubTask:
    """What run_step needs of a Celery task on a worker: its request and retry (which Celery raises)."""

    def __init__(self) -> None:
        self.request = SimpleNamespace(is_eager=False, retries=0)
        self.retried: list[tuple[type, float]] = []

    def retry(self, *, exc, countdown):
        self.retried.append((type(exc), countdown))
        return RuntimeError("retried")


@pytest.mark.django_db
def test_a_judge_call_whose_rate_limiter_is_unreachable_is_retried_shortly_like_a_collection(fake, settings):
    from redis.exceptions import ConnectionError as RedisConnectionError

    from llm_collect import calls, limits
    from llm_judging.services.calling import judge_item
    from llm_judging.services.runs import start_judging_run
    from tests.conftest import make_judged_study

    study = make_judged_study(slug="outage-judging", participants=2)
    start_judging_run(study=study, judges=[make_judge(fake.url, study=study)], orders="one")
    gen_study = make_llm_study(url=fake.url, vignettes=1)
    gen = Generation.objects.get(run=services.start_collection(study=gen_study, samples=1))
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # the limiter's Redis is down
    limits.redis_client.cache_clear()
    steps = {
        "judging": lambda retries: judge_item(call_id=JudgeCall.objects.first().pk, retries=retries),
        "collection": lambda retries: services.collect(generation_id=gen.pk, retries=retries),
    }
    for step in steps.values():
        task = StubTask()
        with pytest.raises(RuntimeError, match="retried"):
            calls.run_step(task, step)
        assert task.retried == [(RedisConnectionError, queueing.OUTAGE_RETRY_SECONDS)]
    assert fake.requests == []
    limits.redis_client.cache_clear()
