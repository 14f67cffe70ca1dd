"""Integration: a real Celery worker process, Redis as the broker, the test's PostgreSQL database."""

import pytest

from llm_collect import services
from llm_collect.models import Generation
from surveys.models import Answer
from tests.fakes.llm_servers import FakeLLMServer
from tests.workers import celery_worker, own_queue, wait_for

from .conftest import make_llm_study


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_queued_tasks_complete_on_a_real_worker_with_one_answer_per_sample(settings):
    queue = own_queue("llm")
    settings.LLM_CALLS = {**settings.LLM_CALLS, "queue": queue}
    with FakeLLMServer(script=[{"status": 429, "retry_after": 1}, {"status": 500}]) as server:
        study = make_llm_study(url=server.url, providers=["openai", "gemini"], vignettes=2)
        run = services.start_collection(study=study, samples=2)  # commits: the tasks go to the broker
        # A duplicate of every message, as after a redelivery: it must change nothing.
        services.queue(list(Generation.objects.filter(run=run).values_list("pk", flat=True)))
        with celery_worker(queue, pool="threads", concurrency=4, env={"FAKE_LLM_API_KEY": "sk-test"}) as worker:
            wait_for(worker, lambda: Generation.objects.filter(run=run, status="done").count() >= 8)
    assert Generation.objects.filter(run=run, status="done").count() == 8
    assert Answer.objects.for_study(study).filter(origin="llm").count() == 8
    assert Answer.objects.for_study(study).filter(selected=True).count() == 4
    assert len(server.requests) == 8 + 2  # one call per sample, plus the 429 and the 500 that were retried
