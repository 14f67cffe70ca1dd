"""What starting a run shares in both apps: the run's rows made in bulk, and the plan of which to queue."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from .. import client
from ..models import CallRun, LLMCall
from .config import target_for
from .queueing import check_broker
from .states import ask_again

Status = LLMCall.Status
Row = TypeVar("Row", bound=LLMCall)
Key = TypeVar("Key", bound=Hashable)


def missing_keys(configured: list) -> list[str]:
    """Why each System or JudgeModel could not be called: a key not set, not allowed, or for a host not allowed."""
    problems = []
    for one in configured:
        try:
            target = target_for(one)
            client.check_key_allowed(target, resolve=True)
            client.api_key(target)
        except client.MissingKey as exc:
            problems.append(str(exc))
    return problems


def ready_to_start(configured: list) -> None:
    """Before a run writes anything: every key there and allowed (ValidationError naming each problem), and the
    broker answering (BrokerUnavailable)."""
    problems = missing_keys(configured)
    if problems:
        raise ValidationError(problems)
    check_broker()


def existing_or_created(
    existing: QuerySet[Row], *, key: Callable[[Row], Key], wanted: list[Key], make: Callable[[Key], Row]
) -> dict[Key, Row]:
    """Every wanted row by its key: those in `existing`, the missing ones made with ``make(key)``.

    In bulk (three queries, not two per row: at 1,344 rows that was most of a run's first 14 s). The unique
    constraint still makes each row once: a row another run made meanwhile is skipped by ignore_conflicts and
    read back like any other existing row.
    """

    def read() -> dict[Key, Row]:
        return {key(row): row for row in existing.all()}  # a fresh query

    found = read()
    missing = [make(wanted_key) for wanted_key in wanted if wanted_key not in found]
    if missing:
        existing.model._default_manager.bulk_create(missing, batch_size=500, ignore_conflicts=True)
        found = read()
    return found


def plan(run: CallRun, rows: Sequence[LLMCall], *, retry_failed: bool) -> list[int]:
    """The ids to queue, in the order given: not the done ones (counted as already present), failed and
    invalid ones only when asked (``retry_failed``: a fresh set of attempts); waiting ones join this run."""
    to_queue, already, waiting = [], 0, []
    for row in rows:
        if row.status == Status.DONE:
            already += 1
            continue
        if row.status in (Status.FAILED, Status.INVALID):
            if not retry_failed:
                continue
            ask_again(row, run=run)
        elif row.run_id != run.pk:
            waiting.append(row.pk)
        to_queue.append(row.pk)
    if rows:
        type(rows[0])._default_manager.filter(pk__in=waiting).update(run=run)
    run.planned = len(to_queue)
    run.already_present = already
    run.save(update_fields=["planned", "already_present"])
    return to_queue
