"""One idempotent judging step per JudgeCall: claim, call, record (answer collection's pattern, reused).

The row is claimed with llm_collect's ``take`` before the provider is called, its lease kept alive while the
call runs, and every change written by ``move`` on the row still held with the claim token: a redelivered
message for a finished row does nothing, a killed worker's row is free again within one lease, and a worker
presumed dead cannot store a second set of picks. Rate and concurrency limits are the provider's, shared with
answer collection (llm_collect/limits.py), so judging and collecting never overrun a key together.
"""

from __future__ import annotations

import threading

from django.db.models import F
from django.utils import timezone

from llm_collect import client, limits
from llm_collect.services.collecting import reply_fields
from llm_collect.services.config import TryAgain, collect_settings, target_for
from llm_collect.services.states import keep_alive, move, take

from ..models import JudgeCall
from .prompts import SYSTEM_PROMPT, ParseError, judgment_schema, parse_picks, render_judging_prompt

Status = JudgeCall.Status
FINAL = (Status.DONE, Status.FAILED, Status.INVALID)
CLAIMED_FIELDS = ["status", "claim", "attempts", "started_at", "lease_expires_at", "not_before", "history", "error"]
_clients = threading.local()


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


def judge_item(*, call_id: int, retries: int = 0) -> str:
    """One step for one JudgeCall; its status afterwards ("skipped" when there was nothing to do).

    Raises TryAgain (with the delay) when the task should run again later: no rate or concurrency slot, a
    retryable provider error (429, 5xx, timeout), a malformed reply with attempts left, or another worker's lease.
    """
    conf = collect_settings()
    related = ("judge", "cell__study", "cell__vignette", "first_answer", "second_answer")
    call = JudgeCall.objects.select_related(*related).filter(pk=call_id).first()
    if call is None or call.status in FINAL:
        return "skipped"  # a duplicate or redelivered message: nothing to do, nothing to pay
    now = timezone.now()
    if call.status == Status.RUNNING and call.lease_expires_at and call.lease_expires_at > now:
        remaining = (call.lease_expires_at - now).total_seconds()
        raise TryAgain(f"{call} is held by another worker", retry_after=remaining + 1, backoff=False, retries=retries)
    if call.attempts >= conf["max_attempts"]:
        give_up(call)
        return Status.FAILED

    target = target_for(call.judge)
    limit = limits.limit_for(provider=target.provider, base_url=target.endpoint_base, parameters=target.parameters)
    lease = conf["lease_seconds"]
    token = take(call, lease_seconds=lease, max_attempts=conf["max_attempts"])
    if token is None:
        return "skipped"
    # Only what take() changed: a full refresh would drop the related rows loaded above and fetch each again.
    call.refresh_from_db(fields=CLAIMED_FIELDS)
    questions = list(call.cell.study.questions.order_by("position", "id"))
    keys = [q.key for q in questions]
    slot = limits.concurrency_slot(limit, ttl=lease, max_wait=conf["max_wait_seconds"])
    with keep_alive(call, token, lease_seconds=lease, also=(slot.refresh,)):
        try:
            with slot:
                user_prompt = render_judging_prompt(
                    vignette=call.cell.vignette, first=call.first_answer, second=call.second_answer, questions=questions
                )
                limits.wait_for_rate(limit, max_wait=conf["max_wait_seconds"])
                try:
                    reply = client.complete(
                        target,
                        system_prompt=SYSTEM_PROMPT,
                        user_prompt=user_prompt,
                        schema=judgment_schema(keys),
                        http_client=http_client_for(target),
                    )
                except client.Retryable as exc:
                    if exc.status == 429 and exc.retry_after:
                        limits.penalise(limit, exc.retry_after)
                    return record_retryable(call, token, exc, retries=retries)
                except client.Permanent as exc:
                    move(call, token=token, to=Status.FAILED, outcome="permanent error", error=str(exc))
                    return Status.FAILED
        except limits.Busy as exc:
            again = TryAgain(str(exc), retry_after=exc.retry_after, backoff=False, retries=retries)
            move(
                call,
                token=token,
                to=Status.PENDING,
                outcome="not called: " + str(exc),
                not_before=again.due,
                attempts=F("attempts") - 1,  # given back uncalled: not an attempt
            )
            raise again from exc
    return record_reply(call, token, reply, keys, retries=retries)


def give_up(call: JudgeCall) -> None:
    error = (call.error + "\n" if call.error else "") + f"Gave up after {call.attempts} attempts."
    move(call, to=Status.FAILED, outcome="gave up", error=error)


def record_retryable(call: JudgeCall, token: str, exc: client.Retryable, *, retries: int = 0) -> str:
    if call.attempts >= collect_settings()["max_attempts"]:
        move(call, token=token, to=Status.FAILED, outcome="retryable error", error=f"{exc} (gave up)")
        return Status.FAILED
    # A 429 that says when: that time, not exponential backoff on top (1-2 s for a first retry even when the
    # provider asked for 1 s). limits.penalise has already pushed every worker's next slot past it.
    told_when = exc.status == 429 and exc.retry_after is not None
    again = TryAgain(str(exc), retry_after=exc.retry_after, backoff=not told_when, retries=retries)
    body = {"status": exc.status, "body": exc.body[:5000]} if exc.status else {}
    move(
        call, token=token, to=Status.PENDING, outcome="retryable error", error=str(exc), not_before=again.due,
        raw_response=body,
    )  # fmt: skip
    raise again


def record_reply(call: JudgeCall, token: str, reply: client.Reply, keys: list[str], *, retries: int = 0) -> str:
    """Store the call; then the picks (DONE), another try, or INVALID for the researcher after too many."""
    conf = collect_settings()
    call_fields = reply_fields(reply, configured=call.judge)
    try:
        parsed = parse_picks(reply.text, keys)
    except ParseError as exc:
        error = f"Unusable judgment: {exc}"
        invalid_so_far = 1 + sum(1 for entry in call.history if entry.get("outcome") == "invalid output")
        common = dict(token=token, outcome="invalid output", error=error, reply=reply, parse_error=str(exc))
        if invalid_so_far >= conf["max_invalid_attempts"] or call.attempts >= conf["max_attempts"]:
            move(call, to=Status.INVALID, **common, **call_fields)
            return Status.INVALID
        again = TryAgain(error, retry_after=0, backoff=False, retries=retries)
        move(call, to=Status.PENDING, not_before=again.due, **common, **call_fields)
        raise again from exc
    stored = move(
        call,
        token=token,
        to=Status.DONE,
        outcome="judged",
        error="",
        reply=reply,
        parse_error="",
        picks=parsed.picks,
        reasons=parsed.reasons,
        **call_fields,
    )
    return Status.DONE if stored else "skipped"  # not stored: our lease ran out and another worker took it
