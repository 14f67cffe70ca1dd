"""The states of an LLMCall row (a Generation, or llm_judging's JudgeCall), changed only here.

- ``claim`` takes a row for one provider call and counts the attempt. Its guards are the exactly-once
  guarantee, each tested on its own (tests/llm_collect/test_claim_guards.py): the row is PENDING, or RUNNING
  under a lease that ran out (never another worker's live lease, never a final row); it is under the attempts
  cap; and the UPDATE is conditional, so of two workers racing for a row one gets a token and the other None.
- ``keep_alive`` renews that lease (and the provider concurrency place) every few seconds while the worker
  lives, so a killed worker's row is free again within one lease, not after the longest possible call.
- ``move`` is every other change of status: it always clears the claim and the lease, appends one entry to the
  row's history, stamps ``finished_at`` on a final state and ``not_before`` (when the row's next message is due)
  on PENDING (None when the new message waits in the broker). It is a conditional UPDATE: on the row held with
  ``token``, or, without one, on rows in ``from_`` states (default: not held by a live worker). It returns
  whether the row moved.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.db import connections
from django.db.models import F, Q
from django.utils import timezone

from ..models import FINAL, LLMCall

logger = logging.getLogger(__name__)

Status = LLMCall.Status


def claim(row: LLMCall, *, lease_seconds: float, max_attempts: int) -> str | None:
    """Claim the row for one call; the claim token, or None if another worker has it, it is done, or at the cap."""
    now = timezone.now()
    token = uuid.uuid4().hex
    claimable = Q(status=Status.PENDING) | Q(status=Status.RUNNING, lease_expires_at__lt=now)
    taken = (
        type(row)
        ._default_manager.filter(claimable, pk=row.pk, attempts__lt=max_attempts)
        .update(
            status=Status.RUNNING,
            claim=token,
            attempts=F("attempts") + 1,
            started_at=now,
            lease_expires_at=now + timedelta(seconds=lease_seconds),
            not_before=None,
        )
    )
    return token if taken else None


def held(row: LLMCall, token: str):
    return type(row)._default_manager.filter(pk=row.pk, status=Status.RUNNING, claim=token)


def renew(row: LLMCall, token: str, *, lease_seconds: float) -> bool:
    """Push the lease forward while the claim is still ours; False once it is not."""
    until = timezone.now() + timedelta(seconds=lease_seconds)
    return bool(held(row, token).update(lease_expires_at=until))


@contextmanager
def keep_alive(
    row: LLMCall, token: str, *, lease_seconds: float, also: tuple[Callable[[], None], ...] = ()
) -> Iterator:
    """Renew the lease every third of it on a thread of its own until the block ends (or the claim is lost)."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(lease_seconds / 3):
                try:
                    if not renew(row, token, lease_seconds=lease_seconds):
                        return
                    for renew_more in also:
                        renew_more()
                except Exception:
                    # The database or Redis out of reach for a moment: beat again a third of a lease later, while
                    # the lease still holds, rather than let it lapse under a paid call in flight.
                    logger.warning("could not renew the lease of row %s; trying again", row.pk, exc_info=True)
                    connections.close_all()
        finally:
            connections.close_all()  # this thread's own connections only

    thread = threading.Thread(target=beat, name=f"lease-{row.pk}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=5)


def attempt_entry(row: LLMCall, event: str, *, error: str = "", reply=None) -> dict:
    """One line of the row's history: the attempt, when, what happened (``outcome``), and the reply's usage."""
    entry = {"attempt": row.attempts, "at": timezone.now().isoformat(), "outcome": event}
    if error:
        entry["error"] = error[:2000]
    if reply is not None:
        entry.update(
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            latency_ms=round(reply.latency * 1000),
            finish_reason=reply.finish_reason,
        )
        if reply.notes:
            entry["notes"] = list(reply.notes)
    return entry


def move(
    row: LLMCall,
    *,
    to: str,
    event: str,
    token: str | None = None,
    from_: tuple[str, ...] | None = None,
    error: str | None = None,
    reply=None,
    not_before: datetime | None = None,
    **fields,
) -> bool:
    """The one writer of a status change after the claim (see the module docstring). ``error=None`` keeps it."""
    now = timezone.now()
    if token is not None:
        rows = held(row, token)
    elif from_ is not None:
        rows = type(row)._default_manager.filter(pk=row.pk, status__in=from_)
    else:  # nobody holds it: pending, or running under a lease that ran out
        rows = (
            type(row)
            ._default_manager.filter(pk=row.pk)
            .filter(Q(status=Status.PENDING) | Q(status=Status.RUNNING, lease_expires_at__lt=now))
        )
    entry = attempt_entry(row, event, error=error or "", reply=reply)
    change = {
        "status": to,
        "claim": "",
        "lease_expires_at": None,
        "history": [*row.history, entry],
        **fields,
    }
    if error is not None:
        change["error"] = error
    if to == Status.DONE:  # a result: no refusal, block or cut stands any more
        change.setdefault("outcome", "")
        change.setdefault("outcome_reason", "")
    if to in FINAL:
        change.update(finished_at=now, not_before=None)
    else:
        # not_before: when an ETA message a worker holds is due (None: the message waits in the broker).
        change.update(queued_at=now, not_before=not_before)
    return bool(rows.update(**change))


def ask_again(row: LLMCall, **fields) -> bool:
    """A failed or invalid row (a refusal or a block included) back to PENDING with a fresh set of attempts."""
    done_with = (Status.FAILED, Status.INVALID)
    cleared = {"attempts": 0, "outcome": "", "outcome_reason": "", **fields}
    return move(row, from_=done_with, to=Status.PENDING, event="asked again", **cleared)
