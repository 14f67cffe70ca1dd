"""Beyond one machine: a queue per kind of task, and heavy reads from a read replica when one is configured."""

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from .test_project import SETUP, run_python


def queue_of(task_name: str, **options) -> str:
    from moraljudge.celery import app

    return app.amqp.router.route(options, task_name)["queue"].name


def test_each_kind_of_task_has_its_own_queue():
    assert queue_of("llm_collect.tasks.collect") == queue_of("llm_collect.tasks.sweep") == "collection"
    assert queue_of("llm_judging.tasks.judge") == queue_of("llm_judging.tasks.sweep") == "collection"  # LLM calls too
    assert queue_of("surveys.prolific.tasks.reconcile_live_studies") == "prolific"
    assert queue_of("analysis.tasks.refit_study") == queue_of("analysis.tasks.refit_live_studies") == "refit"
    assert queue_of("surveys.tasks.release_expired_reservations") == "celery"
    assert queue_of("analysis.tasks.refit_study", queue="test-own") == "test-own"  # an explicit queue still wins


def test_a_worker_started_without_naming_queues_consumes_every_kind():
    from moraljudge.celery import app

    # `celery worker` without -Q (compose's worker, `make worker`) consumes app.conf.task_queues.
    assert {queue.name for queue in app.conf.task_queues} == {"celery", "collection", "prolific", "refit"}


@pytest.mark.redis
def test_a_queued_refit_waits_in_the_refit_queue_on_the_broker(settings):
    import redis

    from analysis import tasks

    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    before = broker.llen("refit")
    tasks.refit_study.apply_async(args=[0])  # study 0 does not exist: a worker would do nothing with it
    try:
        assert broker.llen("refit") == before + 1
    finally:
        broker.lpop("refit")  # kombu pushes to the head: take back the message this test sent


def test_without_a_replica_url_there_is_no_replica_and_no_router():
    code = SETUP + "from django.conf import settings as s; print(sorted(s.DATABASES), s.DATABASE_ROUTERS)"
    assert run_python(code, DEBUG="1").stdout.split() == ["['default']", "[]"]


# The demo with 16 simulated judges (as `make run` has it, enough to fit) in both files; then the primary loses
# its judgments. Refit and exports read the replica,
# everything else (and every write) the primary.
SIMULATE = SETUP + (
    "from django.core.management import call_command;"
    "call_command('migrate', verbosity=0); call_command('load_demo', stdout=open('/dev/null', 'w'));"
    "call_command('simulate_judges', 'demo', '--until-completed', '16', stdout=open('/dev/null', 'w'))"
)
READ = SETUP + (
    "import json; from analysis.exports import export_lines; from analysis.services import refit_study;"
    "from surveys.models import Judgment, Study; from analysis.models import AnalysisRun;"
    "study = Study.objects.get(slug='demo');"
    "run = refit_study(study=study, trigger='on_demand', parameters={'bootstrap': 20, 'split_halves': 5});"
    "print(json.dumps([Judgment.objects.count(), run.n_judgments, len(''.join(export_lines(study=study, name='judgments.csv', run=None)).splitlines()) - 1,"
    " AnalysisRun.objects.filter(pk=run.pk).exists(), run.error]))"
)


def test_refit_and_exports_read_the_replica_when_one_is_configured(tmp_path):
    primary, replica = tmp_path / "primary.sqlite3", tmp_path / "replica.sqlite3"
    made = run_python(SIMULATE, DEBUG="1", DATABASE_URL=f"sqlite:///{primary}")
    assert made.returncode == 0, made.stderr
    shutil.copy(primary, replica)
    with sqlite3.connect(primary) as db:
        db.execute("DELETE FROM surveys_judgment")
    env = {"DEBUG": "1", "DATABASE_URL": f"sqlite:///{primary}"}
    with_replica = run_python(READ, **env, DATABASE_REPLICA_URL=f"sqlite:///{replica}")
    assert with_replica.returncode == 0, with_replica.stderr
    on_primary, fitted, exported, stored, error = json.loads(with_replica.stdout)
    assert on_primary == 0, error  # read from the replica
    assert fitted == exported > 0, error
    assert stored  # the run itself was written to the primary
    alone = run_python(READ, **env)
    assert json.loads(alone.stdout)[:3] == [0, 0, 0]  # unset, nothing changes: the primary is read


# benchmarks/scale.py -------------------------------------------------------------------------------------
SCALE = Path(__file__).resolve().parents[1] / "benchmarks" / "scale.py"


def test_the_scale_benchmark_explains_itself_without_starting_anything():
    done = subprocess.run([sys.executable, str(SCALE), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "--sizes" in done.stdout


@pytest.mark.postgres
def test_the_scale_benchmark_grows_a_tiny_study_and_prints_its_table(tmp_path):
    from django.db import connection

    server = connection.settings_dict
    base = f"postgres://{server['USER']}:{server['PASSWORD']}@{server['HOST'] or '127.0.0.1'}:{server['PORT'] or 5432}"
    rows = tmp_path / "rows.jsonl"
    command = [
        sys.executable,
        str(SCALE),
        "--sizes",
        "500",
        "--bootstrap",
        "10",
        "--postgres",
        base,
        "--rows",
        str(rows),
    ]
    # A database of its own (created, then dropped by the benchmark), never one a developer's benchmark uses.
    command += ["--database", f"{server['NAME']}_scale_smoke_{os.getpid()}", "--page-judges", "2", "--concurrency", "2"]
    done = subprocess.run([*command, "--baseline-requests", "20"], capture_output=True, text=True, timeout=420)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Run 1 of 'scale': 500 valid judgments from 20 participants" in done.stdout
    for line in ("| refit wall (s) |", "| judgments.csv first byte (s) |", "| attention POST p95 / healthz p95 |"):
        assert line in done.stdout
    assert re.search(r"refit phases at 500 judgments: reading [\d.]+ s, bootstrap weights", done.stdout)

    # The growth from one N to the next, from the rows a run wrote (here the same row at twice the size).
    (row,) = [json.loads(line) for line in rows.read_text().splitlines()]
    rows.write_text(json.dumps(row) + "\n" + json.dumps(row | {"size": 1000}) + "\n")
    table = subprocess.run([sys.executable, str(SCALE), "--table-from", str(rows)], capture_output=True, text=True)
    assert "growth 500 -> 1,000 judgments (2x):" in table.stdout
    assert re.search(r"refit wall +1\.00x +\(ok\)", table.stdout)
