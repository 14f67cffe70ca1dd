"""Fixtures for LLM collection: a fake provider on 127.0.0.1, a draft study with LLM systems pointed at it, and
brokers that answer or do not."""

import socket
import subprocess
import time
from contextlib import contextmanager

import pytest

from llm_collect import limits
from surveys.models import Question, Study, System, Vignette
from tests.conftest import QUESTION_KEYS
from tests.fakes.llm_servers import FakeLLMServer

FAST = {"requests_per_minute": 60000, "burst": 100, "concurrency": 50}


@pytest.fixture
def fake():
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(autouse=True)
def fresh_local_limiter(monkeypatch):
    """The in-process limiter keeps slots and penalties per key: each test starts with none."""
    monkeypatch.setattr(limits, "_local", limits.LocalBackend())


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("FAKE_LLM_API_KEY", "sk-test")


def make_llm_study(*, url: str, slug="llm", providers=("openai-compatible",), vignettes=2, parameters=None):
    study = Study.objects.create(slug=slug, name=f"Study {slug}")
    for position, key in enumerate(QUESTION_KEYS):
        Question.objects.create(study=study, key=key, text=f"Which is better on {key}?", position=position)
    for n in range(1, vignettes + 1):
        Vignette.objects.create(study=study, key=f"v{n}", character=f"Sam{n}", text=f"Story {n}.", position=n)
    for position, provider in enumerate(providers):
        System.objects.create(
            study=study,
            key=f"m{position}",
            label=f"Model {position}",
            kind="llm",
            provider=provider,
            model={"openai": "gpt-4o", "anthropic": "claude-3-7-sonnet-20250219", "gemini": "gemini-1.5-flash"}.get(
                provider, "deepseek-chat"
            ),
            base_url=url,
            api_key_env="FAKE_LLM_API_KEY",
            parameters={**FAST, **(parameters or {})},
            position=position,
        )
    System.objects.create(study=study, key="humans", label="Lay humans", kind="human", position=99)
    return study


def queued(callbacks) -> list[int]:
    """The row ids the captured on-commit callbacks send, in order (calls.queueing.send(task, model, ids))."""
    return [pk for callback in callbacks for pk in callback.args[2]]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def broker_at(url: str | None):
    """Celery's app reads these from app.conf, built once from settings: point it elsewhere for one test, with
    connection pools of its own (the pools keep the broker they were first made for)."""
    from moraljudge.celery import app

    before = (app.conf.task_always_eager, app.conf.broker_url)
    app.conf.task_always_eager, app.conf.broker_url = url is None, url
    app._pool = app.amqp._producer_pool = None
    try:
        yield app
    finally:
        app.conf.task_always_eager, app.conf.broker_url = before
        app._pool = app.amqp._producer_pool = None


@pytest.fixture
def closed_broker():
    """Redis on a port of 127.0.0.1 where nothing listens: the broker is down."""
    with broker_at(f"redis://127.0.0.1:{free_port()}/0") as app:
        yield app


class OwnRedis:
    """A redis-server of the test's own on a free port, so that stopping it touches no other user of Redis;
    ``start`` again brings it back on the same port (empty)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = None

    def start(self) -> "OwnRedis":
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        limits.redis_client.cache_clear()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                limits.redis_client(self.url).ping()
                return self
            except Exception:
                time.sleep(0.05)
        pytest.fail("redis-server did not start")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)

    def __enter__(self) -> "OwnRedis":
        return self.start()

    def __exit__(self, *exc) -> None:
        if self.process and self.process.poll() is None:
            self.stop()
        limits.redis_client.cache_clear()
