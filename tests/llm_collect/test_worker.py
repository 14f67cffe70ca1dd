"""Integration: a real Celery worker process, Redis as the broker, the test's PostgreSQL database."""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from llm_collect import services
from llm_collect.models import Generation
from surveys.models import Answer
from tests.fakes.llm_servers import FakeLLMServer

from .conftest import make_llm_study

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def start_worker(queue: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "DATABASE_URL": database_url(),
        "DB_CONN_MAX_AGE": "0",
        "SECRET_KEY": "worker-test",
        "FAKE_LLM_KEY": "sk-test",
    }
    command = [sys.executable, "-m", "celery", "-A", "moraljudge", "worker", "-Q", queue, "-P", "threads"]
    command += ["-c", "4", "--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=WARNING"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_queued_tasks_complete_on_a_real_worker_with_one_answer_per_sample(settings):
    queue = f"test-{uuid.uuid4().hex[:8]}"  # a queue of our own: nothing else on the broker is consumed
    settings.LLM_COLLECT = {**settings.LLM_COLLECT, "queue": queue}
    with FakeLLMServer(script=[{"status": 429, "retry_after": 1}, {"status": 500}]) as server:
        study = make_llm_study(url=server.url, providers=["openai", "gemini"], vignettes=2)
        run = services.start_collection(study=study, samples=2)  # commits: the tasks go to the broker
        # A duplicate of every message, as after a redelivery: it must change nothing.
        services.queue(list(Generation.objects.filter(run=run).values_list("pk", flat=True)))
        worker = start_worker(queue)
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and Generation.objects.filter(run=run, status="done").count() < 8:
                assert worker.poll() is None, worker.stderr.read().decode()[-2000:]
                time.sleep(0.5)
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    assert Generation.objects.filter(run=run, status="done").count() == 8
    assert Answer.objects.for_study(study).filter(origin="llm").count() == 8
    assert Answer.objects.for_study(study).filter(selected=True).count() == 4
    assert len(server.requests) == 8 + 2  # one call per sample, plus the 429 and the 500 that were retried
