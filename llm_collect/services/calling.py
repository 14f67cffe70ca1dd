"""One provider call on a claimed row: the same for an answer (Generation) and a judgment (llm_judging's JudgeCall).

`call_claimed` is the whole mechanism between "a message for this row arrived" and "a reply is in hand": skip a
final row, wait for another worker's live lease, give up at the attempt cap, claim the row (states.take), keep the
lease and the provider's concurrency place alive during the call, wait for the provider's rate slot last, call,
and turn 429s, 5xx, permanent errors and a busy provider into the row's next state. Each caller then records the
reply its own way; `record_unusable` is the shared path for a reply that cannot be read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import F, Model
from django.utils import timezone

from .. import client, limits
from .config import TryAgain, collect_settings, target_for
from .states import FINAL, Status, keep_alive, move, take

# What take() changes: refreshing only these keeps the related rows the caller loaded (no query each again).
CLAIMED_FIELDS = ["status", "claim", "attempts", "started_at", "lease_expires_at", "not_before", "history", "error"]
_clients = threading.local()


@dataclass(frozen=True)
class Request:
    system_prompt: str
    user_prompt: str
    schema: client.OutputSchema | None = None  # the reply's JSON shape (None: an answer in the method's text form)


@dataclass(frozen=True)
class Called:
    token: str  # the claim the reply must be recorded under
    reply: client.Reply


def http_client_for(target: client.Target):
    """This thread's HTTP client for the target's timeout, built once.

    Building one costs about 50 ms of CPU (its TLS context). Paid per call, after the rate slot, it used a
    whole core at 40 calls a second and sent requests late and bunched, so the provider refused the next
    on-time ones (429). One per thread: no client is shared between threads or across a fork.
    """
    cache = getattr(_clients, "by_timeout", None)
    if cache is None:
        cache = _clients.by_timeout = {}
    if target.timeout not in cache:
        cache[target.timeout] = client.build_client(timeout=target.timeout)
    return cache[target.timeout]


def call_claimed(row: Model, *, configured: Model, request: Callable[[], Request], retries: int = 0) -> Called | str:
    """Claim `row` and call the provider `configured` (a System or a JudgeModel) with `request()`.

    Returns Called when a reply is in hand, else the row's status afterwards ("skipped" when there was nothing
    to do). Raises TryAgain (with the delay) when the task should run again later: no rate or concurrency slot,
    a retryable provider error, or another worker's lease still running.
    """
    conf = collect_settings()
    if row.status in FINAL:
        return "skipped"  # a duplicate or redelivered message: nothing to do, nothing to pay
    now = timezone.now()
    if row.status == Status.RUNNING and row.lease_expires_at and row.lease_expires_at > now:
        remaining = (row.lease_expires_at - now).total_seconds()
        raise TryAgain(f"{row} is held by another worker", retry_after=remaining + 1, backoff=False, retries=retries)
    if row.attempts >= conf["max_attempts"]:
        give_up(row)
        return Status.FAILED

    target = target_for(configured)
    limit = limits.limit_for(provider=target.provider, base_url=target.endpoint_base, parameters=target.parameters)
    lease = conf["lease_seconds"]
    token = take(row, lease_seconds=lease, max_attempts=conf["max_attempts"])
    if token is None:
        return "skipped"
    row.refresh_from_db(fields=CLAIMED_FIELDS)
    slot = limits.concurrency_slot(limit, ttl=lease, max_wait=conf["max_wait_seconds"])
    with keep_alive(row, token, lease_seconds=lease, also=(slot.refresh,)):
        try:
            with slot:
                asked = request()
                # Last before the call, so that nothing slow comes between the booked slot and the request.
                limits.wait_for_rate(limit, max_wait=conf["max_wait_seconds"])
                try:
                    reply = client.complete(
                        target,
                        system_prompt=asked.system_prompt,
                        user_prompt=asked.user_prompt,
                        schema=asked.schema,
                        http_client=http_client_for(target),
                    )
                except client.Retryable as exc:
                    if exc.status == 429 and exc.retry_after:
                        limits.penalise(limit, exc.retry_after)
                    return record_retryable(row, token, exc, retries=retries)
                except client.Permanent as exc:
                    move(row, token=token, to=Status.FAILED, outcome="permanent error", error=str(exc))
                    return Status.FAILED
        except limits.Busy as exc:
            again = TryAgain(str(exc), retry_after=exc.retry_after, backoff=False, retries=retries)
            move(
                row,
                token=token,
                to=Status.PENDING,
                outcome="not called: " + str(exc),
                not_before=again.due,
                attempts=F("attempts") - 1,  # given back uncalled: not an attempt
            )
            raise again from exc
    return Called(token, reply)


def give_up(row: Model) -> None:
    """Fail a row that used up its attempts, if nobody holds it."""
    error = (row.error + "\n" if row.error else "") + f"Gave up after {row.attempts} attempts."
    move(row, to=Status.FAILED, outcome="gave up", error=error)


def record_retryable(row: Model, token: str, exc: client.Retryable, *, retries: int = 0) -> str:
    if row.attempts >= collect_settings()["max_attempts"]:
        error = f"{exc} (gave up after {row.attempts} attempts)"
        move(row, token=token, to=Status.FAILED, outcome="retryable error", error=error)
        return Status.FAILED
    # A 429 that says when: that time, not exponential backoff on top (1-2 s for a first retry even when the
    # provider asked for 1 s). limits.penalise has already pushed every worker's next slot past it.
    told_when = exc.status == 429 and exc.retry_after is not None
    again = TryAgain(str(exc), retry_after=exc.retry_after, backoff=not told_when, retries=retries)
    body = {"status": exc.status, "body": exc.body[:5000]} if exc.status else {}
    move(
        row, token=token, to=Status.PENDING, outcome="retryable error", error=str(exc), not_before=again.due,
        raw_response=body,
    )  # fmt: skip
    raise again


def record_unusable(
    row: Model, token: str, reply: client.Reply, *, error: str, parse_error: str, call_fields: dict, retries: int
) -> str:
    """A paid reply that cannot be read: kept, then asked again, or INVALID for the researcher after too many."""
    conf = collect_settings()
    invalid_so_far = 1 + sum(1 for entry in row.history if entry.get("outcome") == "invalid output")
    common = dict(token=token, outcome="invalid output", error=error, reply=reply, parse_error=parse_error)
    if invalid_so_far >= conf["max_invalid_attempts"] or row.attempts >= conf["max_attempts"]:
        move(row, to=Status.INVALID, **common, **call_fields)
        return Status.INVALID
    again = TryAgain(error, retry_after=0, backoff=False, retries=retries)
    move(row, to=Status.PENDING, not_before=again.due, **common, **call_fields)
    raise again
