"""Integration: the expiry sweep on a real Celery worker, Redis as broker, the test's PostgreSQL."""

import os
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.db.models import Sum
from django.utils import timezone

from surveys.allocation import allocate
from surveys.lifecycle import go_live
from surveys.models import Assignment, Cell, Participant
from surveys.tasks import release_expired_reservations
from tests.conftest import make_study

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_the_sweep_on_a_worker_reopens_expired_cells_and_a_second_run_changes_nothing():
    study = go_live(study=make_study(vignettes=3, vignettes_per_participant=2))
    participant = Participant.objects.create(study=study, prolific_pid="a" * 24)
    allocate(participant=participant)
    Assignment.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    queue = f"test-sweep-{uuid.uuid4().hex[:8]}"  # our own queue: nothing else on the broker is consumed
    release_expired_reservations.apply_async(queue=queue)
    release_expired_reservations.apply_async(queue=queue)  # a redelivery, or the next beat tick
    env = {**os.environ, "DATABASE_URL": database_url(), "DB_CONN_MAX_AGE": "0", "SECRET_KEY": "worker-test"}
    command = [sys.executable, "-m", "celery", "-A", "moraljudge", "worker", "-Q", queue, "-P", "solo"]
    command += ["-I", "surveys.tasks", "--without-heartbeat", "--without-gossip", "--without-mingle"]
    command += ["--loglevel=WARNING"]
    worker = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not Participant.objects.filter(status="expired").exists():
            assert worker.poll() is None, worker.stderr.read().decode()[-2000:]
            time.sleep(0.5)
        time.sleep(1)  # let the second delivery run too
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    participant.refresh_from_db()
    assert participant.status == Participant.Status.EXPIRED
    assert Cell.objects.filter(study=study).aggregate(n=Sum("reserved"))["n"] == 0
    assert set(Assignment.objects.values_list("status", flat=True)) == {Assignment.Status.RELEASED}
