"""One provider call on a claimed row: the same for an answer (Generation) and a judgment (llm_judging's JudgeCall).

`call_claimed` is the whole mechanism between "a message for this row arrived" and "a reply is in hand": skip a
final row, wait for another worker's live lease, give up at the attempt cap, claim the row (states.claim), keep
the lease and the provider's concurrency place alive during the call, wait for the provider's rate slot last,
call, and turn 429s, 5xx, permanent errors and a busy provider into the row's next state. A wait the provider
asks for (Retry-After, Gemini's retryDelay, a rate-limit reset) slows every worker on that provider at once
(limits.penalise through Redis), so the others give their turn back uncalled instead of spending attempts in
the same window.

A reply the provider itself marks as a refusal, a safety block or a length cut is settled here too (the
outcome and the provider's reason stored; a refusal or a block is final until the researcher asks again, a
length cut is asked once more with a larger budget when the System's ``length_retry_max_tokens`` allows it).
Each caller records any other reply its own way; `record_unusable` is the shared path for a reply that
cannot be read (the outcome "malformed" once the tries are spent).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from django.db.models import F
from django.utils import timezone

from .. import client, limits
from ..models import FINAL, LLMCall
from .config import TryAgain, bounded_wait, call_settings, estimate_cost, target_for
from .states import claim as claim_row
from .states import keep_alive, move

Status = LLMCall.Status
Outcome = LLMCall.Outcome
# What claim() changes: refreshing only these keeps the related rows the caller loaded (no query each again).
CLAIMED_FIELDS = ["status", "claim", "attempts", "started_at", "lease_expires_at", "not_before", "history", "error"]
LENGTH_CUT = Outcome.LENGTH.label
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


def claim(row: LLMCall) -> str | None:
    """Take the row for one provider call; None if someone else has it, it is done, or it is at the cap."""
    conf = call_settings()
    return claim_row(row, lease_seconds=conf["lease_seconds"], max_attempts=conf["max_attempts"])


def call_claimed(row: LLMCall, *, configured, request: Callable[[], Request], retries: int = 0) -> Called | str:
    """Claim `row` and call the provider `configured` (a System or a JudgeModel) with `request()`.

    Returns Called when a reply is in hand, else the row's status afterwards ("skipped" when there was nothing
    to do). Raises TryAgain (with the delay) when the task should run again later: no rate or concurrency slot,
    a retryable provider error, a length cut asked again, or another worker's lease still running.
    """
    if row.status in FINAL:
        return "skipped"  # a duplicate or redelivered message: nothing to do, nothing to pay
    now = timezone.now()
    if row.status == Status.RUNNING and row.lease_expires_at and row.lease_expires_at > now:
        remaining = (row.lease_expires_at - now).total_seconds()
        raise TryAgain(f"{row} is held by another worker", retry_after=remaining + 1, backoff=False, retries=retries)
    if row.attempts >= call_settings()["max_attempts"]:
        give_up(row)
        return Status.FAILED
    target = target_with_budget(row, target_for(configured))
    token = claim(row)
    if token is None:
        return "skipped"
    row.refresh_from_db(fields=CLAIMED_FIELDS)
    reply = call_holding(row, token, target, request, retries=retries)
    if isinstance(reply, str):
        return reply
    if reply.outcome:
        return settle_outcome(row, token, reply, configured=configured, retries=retries)
    return Called(token, reply)


def call_holding(row: LLMCall, token: str, target: client.Target, request, *, retries: int) -> client.Reply | str:
    """The call itself, under the claim: a reply, or the row's new status (raises TryAgain to come back later)."""
    conf = call_settings()
    limit = limits.limit_for(provider=target.provider, base_url=target.endpoint_base, parameters=target.parameters)
    lease = conf["lease_seconds"]
    slot = limits.concurrency_slot(limit, ttl=lease, max_wait=conf["max_wait_seconds"])
    with keep_alive(row, token, lease_seconds=lease, also=(slot.refresh,)):
        try:
            with slot:
                asked = request()
                # Last before the call, so that nothing slow comes between the booked slot and the request.
                limits.wait_for_rate(limit, max_wait=conf["max_wait_seconds"])
                try:
                    return client.complete(
                        target,
                        system_prompt=asked.system_prompt,
                        user_prompt=asked.user_prompt,
                        schema=asked.schema,
                        http_client=http_client_for(target),
                    )
                except client.Retryable as exc:
                    wait = bounded_wait(exc.retry_after)
                    if wait:  # the provider said how long: every worker waits with us
                        limits.penalise(limit, wait)
                    return record_retryable(row, token, exc, retries=retries)
                except client.Permanent as exc:
                    move(row, token=token, to=Status.FAILED, event="permanent error", error=str(exc))
                    return Status.FAILED
        except limits.Busy as exc:
            again = TryAgain(str(exc), retry_after=exc.retry_after, backoff=False, retries=retries)
            move(
                row,
                token=token,
                to=Status.PENDING,
                event="not called: " + str(exc),
                not_before=again.due,
                attempts=F("attempts") - 1,  # given back uncalled: not an attempt
            )
            raise again from exc


def target_with_budget(row: LLMCall, target: client.Target) -> client.Target:
    """After a length cut, the System's larger budget for the one retry it allows (and any try after it)."""
    larger = target.parameters.get("length_retry_max_tokens")
    if larger and any(entry.get("outcome") == LENGTH_CUT for entry in row.history):
        return replace(target, max_output_tokens=int(larger))
    return target


def reply_fields(reply: client.Reply, *, configured) -> dict:
    """What a paid call stores whatever it was for: the raw exchange, tokens and cost added up, latency, model."""
    return {
        "raw_request": reply.request,
        "raw_response": reply.raw,
        "raw_text": reply.text,
        "input_tokens": F("input_tokens") + reply.input_tokens,
        "output_tokens": F("output_tokens") + reply.output_tokens,
        "cost_estimate": F("cost_estimate") + estimate_cost(configured, reply.input_tokens, reply.output_tokens),
        "latency_ms": round(reply.latency * 1000),
        "model_version": reply.model_version[:200],
        "finish_reason": reply.finish_reason[:64],
    }


def store_result(row: LLMCall, token: str, reply: client.Reply, *, event: str, call_fields: dict, **result) -> bool:
    """The row DONE with its result, if our claim still holds (False: our lease ran out and another worker took
    the row; its result counts)."""
    return move(row, token=token, to=Status.DONE, event=event, error="", reply=reply, parse_error="",
                **result, **call_fields)  # fmt: skip


def settle_outcome(row: LLMCall, token: str, reply: client.Reply, *, configured, retries: int) -> str:
    """A reply the provider marked refused, blocked or cut by length: stored with its reason. Refused and
    blocked are final (not asked again unless the researcher asks); a length cut is asked once more with the
    System's larger budget if it has one."""
    outcome = Outcome(reply.outcome)
    fields = dict(reply_fields(reply, configured=configured), outcome=outcome, outcome_reason=reply.outcome_reason)
    common: dict[str, Any] = dict(
        token=token, event=outcome.label, error=f"{outcome.label}: {reply.outcome_reason}", reply=reply
    )
    retried = any(entry.get("outcome") == LENGTH_CUT for entry in row.history)
    larger = (configured.parameters or {}).get("length_retry_max_tokens")
    if outcome == Outcome.LENGTH and larger and not retried and row.attempts < call_settings()["max_attempts"]:
        again = TryAgain(f"cut by length: asked again with max {larger} tokens", backoff=False, retries=retries)
        move(row, to=Status.PENDING, not_before=again.due, **common, **fields)
        raise again
    move(row, to=Status.INVALID, **common, **fields)
    return Status.INVALID


def give_up(row: LLMCall) -> None:
    """Fail a row that used up its attempts, if nobody holds it."""
    error = (row.error + "\n" if row.error else "") + f"Gave up after {row.attempts} attempts."
    move(row, to=Status.FAILED, event="gave up", error=error)


def record_retryable(row: LLMCall, token: str, exc: client.Retryable, *, retries: int = 0) -> str:
    if row.attempts >= call_settings()["max_attempts"]:
        error = f"{exc} (gave up after {row.attempts} attempts)"
        move(row, token=token, to=Status.FAILED, event="retryable error", error=error)
        return Status.FAILED
    # The provider said when: that time, not exponential backoff on top (1-2 s for a first retry even when the
    # provider asked for 1 s). limits.penalise has already pushed every worker's next slot past it.
    told_when = exc.retry_after is not None
    again = TryAgain(str(exc), retry_after=exc.retry_after, backoff=not told_when, retries=retries)
    # What the provider said, parsed (client.provider_error): never its raw body, shown to researchers in the admin.
    body = {"status": exc.status, "error": client.provider_error(exc.body)} if exc.status else {}
    move(
        row, token=token, to=Status.PENDING, event="retryable error", error=str(exc), not_before=again.due,
        raw_response=body,
    )  # fmt: skip
    raise again


def record_unusable(
    row: LLMCall, token: str, reply: client.Reply, *, error: str, parse_error: str, call_fields: dict, retries: int
) -> str:
    """A paid reply that cannot be read: kept, then asked again, or INVALID (malformed) after too many."""
    conf = call_settings()
    invalid_so_far = 1 + sum(1 for entry in row.history if entry.get("outcome") == "invalid output")
    common: dict[str, Any] = dict(
        token=token, event="invalid output", error=error, reply=reply, parse_error=parse_error
    )
    if invalid_so_far >= conf["max_invalid_attempts"] or row.attempts >= conf["max_attempts"]:
        move(row, to=Status.INVALID, **common, **call_fields, outcome=Outcome.MALFORMED, outcome_reason=parse_error)
        return Status.INVALID
    again = TryAgain(error, retry_after=0, backoff=False, retries=retries)
    move(row, to=Status.PENDING, not_before=again.due, **common, **call_fields)
    raise again
