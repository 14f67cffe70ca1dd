"""Integration: the refit task on a real Celery worker process, Redis as broker, the test's PostgreSQL."""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from analysis import tasks
from analysis.models import AnalysisRun

from ..conftest import make_judged_study

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_queued_refit_and_its_duplicate_store_two_snapshots_of_the_same_data():
    study = make_judged_study(participants=20, seed=2)
    queue = f"test-refit-{uuid.uuid4().hex[:8]}"  # our own queue: nothing else on the broker is consumed
    for _ in range(2):  # a redelivered message runs again: another snapshot of the same data
        tasks.refit_study.apply_async(args=[study.pk, AnalysisRun.Trigger.ON_DEMAND, None], queue=queue)
    env = {**os.environ, "DATABASE_URL": database_url(), "DB_CONN_MAX_AGE": "0", "SECRET_KEY": "worker-test"}
    command = [sys.executable, "-m", "celery", "-A", "moraljudge", "worker", "-Q", queue, "-P", "solo"]
    command += ["--without-heartbeat", "--without-gossip", "--without-mingle", "--loglevel=WARNING"]
    worker = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and AnalysisRun.objects.finished().filter(study=study).count() < 2:
            assert worker.poll() is None, worker.stderr.read().decode()[-2000:]
            time.sleep(0.5)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    runs = list(AnalysisRun.objects.filter(study=study).order_by("id"))
    assert [run.status for run in runs] == ["done", "done"]
    assert runs[0].data_hash == runs[1].data_hash and runs[0].n_judgments == 20 * 3 * 5
    assert runs[0].trigger == AnalysisRun.Trigger.ON_DEMAND
