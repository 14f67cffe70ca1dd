"""Integration (issue 10.5): a Celery worker killed with SIGKILL in the middle of its provider calls. Its rows
move on to another worker within a minute, and no sample is paid for twice beyond the calls it had in flight.

Real worker processes on Redis and the test's PostgreSQL database, against a fake provider on 127.0.0.1.
"""

import threading
import time

import pytest

from llm_collect import tasks
from llm_collect.models import Generation
from surveys.models import Answer
from tests.fakes.llm_servers import FakeLLMServer
from tests.workers import celery_worker, own_queue, wait_for

from .conftest import make_llm_study

SWEEP_EVERY = 15.0  # seconds, as beat sends it (CELERY_BEAT_SCHEDULE["llm-collect-sweep"])


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_call_strands_nothing_and_pays_no_sample_twice(settings):
    from django.conf import settings as live

    assert live.CELERY_BEAT_SCHEDULE["llm-collect-sweep"]["schedule"] == SWEEP_EVERY
    queue = own_queue("llm-killed")
    settings.LLM_CALLS = {**settings.LLM_CALLS, "queue": queue}
    env = {"FAKE_LLM_API_KEY": "sk-test", "LLM_COLLECT_QUEUE": queue}
    never_answered = threading.Event()  # the doomed worker's calls stay in flight until it is dead
    with FakeLLMServer(script=[{"hold": never_answered}, {"hold": never_answered}]) as server:
        study = make_llm_study(url=server.url, vignettes=2)
        run_id = services_start(study)
        rows = Generation.objects.filter(run_id=run_id)
        assert rows.count() == 4
        with celery_worker(queue, pool="threads", concurrency=2, env=env) as doomed:
            wait_for(doomed, lambda: len(server.requests) >= 2, timeout=60, what="two calls in flight")
            doomed.kill()  # SIGKILL: no warm shutdown, no acknowledgement, no clean-up
            doomed.wait()
        killed_at = time.monotonic()
        in_flight = len(server.requests)
        assert rows.filter(status="running").count() == in_flight  # held by the dead worker

        with celery_worker(queue, pool="threads", concurrency=2, env=env) as survivor:
            beat = Beat(queue)
            wait_for(
                survivor,
                lambda: beat.tick() or rows.filter(status="done").count() == 4,
                timeout=60 - (time.monotonic() - killed_at),
                what="every generation done within a minute of the kill",
            )
        never_answered.set()
    assert Answer.objects.for_study(study).filter(origin="llm").count() == 4
    # One paid call per sample, plus the calls that were in flight when the worker died.
    assert len(server.requests) <= 4 + in_flight
    assert sum(rows.values_list("attempts", flat=True)) == len(server.requests)
    for gen in rows:
        assert [e["outcome"] for e in gen.history][-1] == "answer stored"


def services_start(study) -> int:
    from llm_collect import services

    return services.start_collection(study=study, samples=2).pk  # commits: the four tasks go to the broker


class Beat:
    """Beat's part in the test: send the sweep through the broker every SWEEP_EVERY seconds."""

    def __init__(self, queue: str) -> None:
        self.queue = queue
        self.last = 0.0

    def tick(self) -> None:
        if time.monotonic() - self.last >= SWEEP_EVERY:
            self.last = time.monotonic()
            tasks.sweep.apply_async(queue=self.queue)
