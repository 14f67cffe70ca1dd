"""Where the refit buttons send their task: no broker, an in-memory one, or one that does not answer."""

import socket
from contextlib import contextmanager

import pytest

from moraljudge.celery import app


@contextmanager
def broker_at(url: str | None):
    """Celery reads these from app.conf, built once from settings: point it elsewhere for one test."""
    before = (app.conf.task_always_eager, app.conf.broker_url)
    app.conf.task_always_eager, app.conf.broker_url = url is None, url
    try:
        yield
    finally:
        app.conf.task_always_eager, app.conf.broker_url = before


@pytest.fixture
def no_broker():
    with broker_at(None):
        yield


@pytest.fixture
def memory_broker():
    """A real kombu transport held in this process; `queued()` reads what was sent to the refit queue."""
    with broker_at("memory://"):
        yield
        queued()  # leave nothing for the next test


def queued(queue: str = "refit") -> list[dict]:
    """The task messages waiting on `queue` (taken off it): task name and args."""
    messages = []
    with app.connection_for_read() as connection, connection.SimpleQueue(queue) as simple:
        while True:
            try:
                message = simple.get(block=False)
            except simple.Empty:
                return messages
            messages.append({"task": message.headers["task"], "args": message.payload[0]})
            message.ack()


@pytest.fixture
def closed_broker():
    """Redis on a port of 127.0.0.1 where nothing listens: the broker is down."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with broker_at(f"redis://127.0.0.1:{port}/0"):
        yield
