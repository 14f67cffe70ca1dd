"""Integration: the reconcile task on a real Celery worker, Redis as broker, the test's PostgreSQL, fake Prolific."""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection
from django.db.models import Sum

from surveys.allocation import allocate
from surveys.lifecycle import go_live
from surveys.models import Cell, Participant
from surveys.prolific_tasks import reconcile_live_studies
from tests.conftest import make_study
from tests.fakes.prolific_server import FakeProlific

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_the_beat_task_on_a_worker_reopens_the_cells_of_a_missed_return():
    study = go_live(study=make_study(vignettes=3, vignettes_per_participant=2, prolific_study_id="st1"))
    participant = Participant.objects.create(study=study, prolific_pid="pid0", session_id="sub0")
    allocate(participant=participant)
    queue = f"test-prolific-{uuid.uuid4().hex[:8]}"  # our own queue: nothing else on the broker is consumed
    with FakeProlific() as prolific:
        prolific.add_submission("sub0", participant_id="pid0", study_id="st1", status="RETURNED")
        reconcile_live_studies.apply_async(queue=queue)
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "DB_CONN_MAX_AGE": "0",
            "SECRET_KEY": "worker-test",
            "PROLIFIC_API_URL": prolific.url,
            "PROLIFIC_API_TOKEN": prolific.token,
        }
        # -I: the task module is named explicitly (surveys.tasks is what autodiscovery imports).
        command = [sys.executable, "-m", "celery", "-A", "moraljudge", "worker", "-Q", queue, "-P", "solo"]
        command += ["-I", "surveys.prolific_tasks", "--without-heartbeat", "--without-gossip", "--without-mingle"]
        command += ["--loglevel=WARNING"]
        worker = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and not Participant.objects.filter(status="returned").exists():
                assert worker.poll() is None, worker.stderr.read().decode()[-2000:]
                time.sleep(0.5)
        finally:
            worker.terminate()
            worker.wait(timeout=30)
    participant.refresh_from_db()
    assert (participant.status, participant.prolific_status) == (Participant.Status.RETURNED, "RETURNED")
    assert Cell.objects.filter(study=study).aggregate(n=Sum("reserved"))["n"] == 0
    assert prolific.calls[0].authorization == f"Token {prolific.token}"
