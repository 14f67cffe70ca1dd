"""A real Celery worker process for integration tests: Redis as broker, the test's PostgreSQL database."""

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[1]


def own_queue(prefix: str) -> str:
    """A queue of the test's own, so that nothing else on the broker is consumed."""
    return f"test-{prefix}-{uuid.uuid4().hex[:8]}"


def test_database_url() -> str:
    s = connection.settings_dict
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


@contextmanager
def celery_worker(queue: str, *, pool: str = "solo", concurrency: int = 1, env: dict | None = None) -> Iterator:
    """Run `celery worker` on `queue` against the test database until the block ends."""
    environment = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "DB_CONN_MAX_AGE": "0",
        "SECRET_KEY": "worker-test",
        "LLM_ALLOWED_HOSTS": "127.0.0.1",  # the fake providers, as the suite's settings allow them in-process
        **(env or {}),
    }
    command = [sys.executable, "-m", "celery", "-A", "moraljudge", "worker", "-Q", queue, "-P", pool]
    command += ["-c", str(concurrency), "--without-heartbeat", "--without-gossip", "--without-mingle"]
    command += ["--loglevel=WARNING"]
    worker = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield worker
    finally:
        worker.terminate()
        worker.wait(timeout=30)


def wait_for(worker: subprocess.Popen, done: Callable[[], bool], *, timeout: float = 90, what: str = "") -> None:
    """Poll until `done()` holds. A worker that dies on the way fails the test with its last words, and so does
    a timeout: the caller's assertions then never run on a state that merely has not arrived yet."""
    deadline = time.monotonic() + timeout
    while not done():
        assert worker.poll() is None, worker.stderr.read().decode()[-2000:]
        if time.monotonic() >= deadline:
            pytest.fail(f"Not done after {timeout:.0f} s{': ' + what if what else ''}.")
        time.sleep(0.5)
