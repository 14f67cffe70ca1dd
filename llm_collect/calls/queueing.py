"""The messages of LLMCall rows: sent on commit, checked for before a run, swept when lost, and the Celery
task's retry loop. One set for answer collection and LLM judging; each app passes its own model and task.

The database is the record; a message only tells a worker to look. So a lost message costs a delay, never
data, and each way of losing one has its own rule in the sweep (beat runs it every 15 s):

- a worker died holding the row: its lease runs out (RUNNING, ``lease_expires_at`` past);
- a worker died holding the row's retry (a Celery countdown): ``not_before`` passed ``sweep_grace_seconds`` ago;
- the broker refused the message (down, or gone mid-run): ``send`` stamps the rows it could not send with
  ``not_before = now``, so the same rule sends them again within a minute of the broker's return;
- the message was lost inside the broker (Redis flushed): PENDING for ``sweep_minutes``.

Before a run writes anything, ``check_broker`` makes sure a configured broker answers: a run started while it is
down is refused (503 in the admin) with nothing written, rather than written and stranded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from typing import Literal, TypedDict

import kombu.exceptions
from django.db import InterfaceError, OperationalError, transaction
from django.db.models import Q
from django.utils import timezone
from redis.exceptions import ConnectionError as RedisConnectionError

from moraljudge.celery import app

from ..models import LLMCall
from .calling import give_up
from .config import TryAgain, call_settings

log = logging.getLogger(__name__)
Status = LLMCall.Status

MAX_RETRIES = 200  # most retries are only waits for a rate slot; paid calls are capped by the row's attempts
# What a task waits out by asking again shortly: the database or the rate limiter's Redis out of reach for a
# moment. Failing instead would leave the row to the sweep.
OUTAGES = (OperationalError, InterfaceError, RedisConnectionError)
OUTAGE_RETRY_SECONDS = 5
# At-least-once: the message is acknowledged only when the task has finished, and given back to the broker if
# the worker process dies under it, so another worker runs it (the row's claim keeps the call paid once).
TASK_OPTIONS: TaskOptions = {"bind": True, "max_retries": MAX_RETRIES, "acks_late": True, "reject_on_worker_lost": True}
BROKER_ERRORS = (kombu.exceptions.OperationalError, OSError)


class TaskOptions(TypedDict):
    """Celery task options, typed so shared_task(**TASK_OPTIONS) picks its bound-task overload."""

    bind: Literal[True]
    max_retries: int
    acks_late: bool
    reject_on_worker_lost: bool


class BrokerUnavailable(Exception):
    """A broker is configured but does not answer: nothing can be queued."""


def check_broker() -> None:
    """BrokerUnavailable unless the configured broker answers now (no broker configured: tasks run in-process)."""
    if app.conf.task_always_eager:
        return
    try:
        with app.connection_for_write() as connection:  # a fresh connection: the broker may be back
            connection.ensure_connection(max_retries=0, timeout=5)
    except BROKER_ERRORS as exc:
        log.warning("LLM run refused: the broker is unreachable (%s)", exc)
        raise BrokerUnavailable(
            "The task queue (the Celery broker, Redis) cannot be reached, so nothing was started and nothing was "
            "written. Try again when it is back."
        ) from exc


def send_on_commit(task, model: type[LLMCall], ids: list[int]) -> None:
    """One message per row, sent when the transaction commits (to LLM_CALLS["queue"] if set)."""
    if ids:
        transaction.on_commit(partial(send, task, model, list(ids)))


def send(task, model: type[LLMCall], ids: list[int]) -> None:
    """Send now; at the first message the broker refuses, stamp that row and the rest for the sweep."""
    queue = call_settings()["queue"]
    options = {"queue": queue} if queue else {}
    for n, pk in enumerate(ids):
        try:
            task.apply_async((pk,), **options)
        except BROKER_ERRORS as exc:
            mark_unsent(model, ids[n:])
            log.warning("%d %s messages not sent (%s): the sweep sends them", len(ids) - n, model.__name__, exc)
            return


def mark_unsent(model: type[LLMCall], ids: list[int]) -> None:
    now = timezone.now()
    for start in range(0, len(ids), 1000):
        rows = model._default_manager.filter(pk__in=ids[start : start + 1000], status=Status.PENDING)
        rows.update(not_before=now)


def sweep(model: type[LLMCall], send_again: Callable[[list[int]], None], *, older_than_minutes=None) -> int:
    """Queue again what lost its message (the module docstring's rules); fail rows at the attempts cap."""
    conf = call_settings()
    minutes = conf["sweep_minutes"] if older_than_minutes is None else older_than_minutes
    now = timezone.now()
    overdue = now - timedelta(seconds=conf["sweep_grace_seconds"])
    stale = model._default_manager.filter(
        Q(status=Status.PENDING, queued_at__lt=now - timedelta(minutes=minutes))
        | Q(status=Status.PENDING, not_before__lt=overdue)
        | Q(status=Status.RUNNING, lease_expires_at__lt=now)
    )
    for row in stale.filter(attempts__gte=conf["max_attempts"]):
        give_up(row)
    requeued = []
    with transaction.atomic():
        for pk, queued_at in stale.filter(attempts__lt=conf["max_attempts"]).values_list("pk", "queued_at"):
            # The new message waits in the broker: no retry is due at a worker any more.
            if model._default_manager.filter(pk=pk, queued_at=queued_at).update(queued_at=now, not_before=None):
                requeued.append(pk)
        send_again(requeued)
    if requeued:
        log.info("sweep re-queued %d %s rows", len(requeued), model.__name__)
    return len(requeued)


def run_step(task, step: Callable[[int], str]) -> str:
    """The body of a call task: ``step(retries)`` until it settles, retried as the row asks (TryAgain) or
    shortly after an outage; without a broker (tasks in-process) it waits here instead of re-queueing."""
    for retries in range(MAX_RETRIES + 1):
        try:
            return step(task.request.retries + retries)
        except TryAgain as exc:
            if not task.request.is_eager:
                countdown = min(exc.delay, call_settings()["max_countdown_seconds"])
                raise task.retry(exc=exc, countdown=countdown) from exc
            time.sleep(min(exc.delay, 60))
        except OUTAGES as exc:
            if task.request.is_eager:
                raise
            raise task.retry(exc=exc, countdown=OUTAGE_RETRY_SECONDS) from exc
    return "gave up waiting"
