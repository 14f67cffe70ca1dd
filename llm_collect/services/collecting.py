"""One idempotent collection step per Generation: claim, call, record.

Idempotency (STYLE.md section 5): a Generation row is created once per system × vignette × sample and every
state change is a conditional UPDATE. A worker *claims* a row (PENDING, or RUNNING whose lease has run out →
RUNNING with a fresh claim token and lease) before it calls the provider, and writes the result only while
it still holds that claim. So a duplicate or redelivered message for a finished row does nothing (no call,
no cost), one for a row another worker holds waits for the lease, and a worker that was presumed dead and
comes back late cannot store a second Answer. The Answer table's own unique (system, vignette, sample) is the
last guard.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from surveys.models import Answer, Study, System
from surveys.services.answers import create_answer, select_answer

from .. import client, limits
from ..models import Generation
from ..parsing import ParseError, parse_answer
from ..prompts import render_prompts
from .config import TryAgain, collect_settings, estimate_cost, target_for


def claim(gen: Generation, *, lease_seconds: float) -> str | None:
    """Take the row for one provider call: a conditional UPDATE; None if someone else has it or it is done."""
    now = timezone.now()
    token = uuid.uuid4().hex
    claimable = Q(status=Generation.Status.PENDING) | Q(status=Generation.Status.RUNNING, lease_expires_at__lt=now)
    taken = (
        Generation.objects.filter(claimable, pk=gen.pk)
        .filter(attempts__lt=collect_settings()["max_attempts"])
        .update(
            status=Generation.Status.RUNNING,
            claim=token,
            attempts=F("attempts") + 1,
            started_at=now,
            lease_expires_at=now + timedelta(seconds=lease_seconds),
        )
    )
    return token if taken else None


def release(gen: Generation, token: str) -> None:
    """Give a claimed row back without having called: PENDING again, and the attempt not counted."""
    held(gen, token).update(
        status=Generation.Status.PENDING, claim="", attempts=F("attempts") - 1, lease_expires_at=None
    )


def held(gen: Generation, token: str):
    return Generation.objects.filter(pk=gen.pk, status=Generation.Status.RUNNING, claim=token)


def collect(*, generation_id: int) -> str:
    """One step for one Generation. Returns the row's status afterwards ("skipped" when there was nothing to do).

    Raises TryAgain when the task should run again later (rate or concurrency slot not free, a provider error
    worth retrying, unusable output with attempts left, or another worker's lease still running).
    """
    conf = collect_settings()
    gen = Generation.objects.select_related("system", "vignette__study").filter(pk=generation_id).first()
    if gen is None or gen.status in (Generation.Status.DONE, Generation.Status.FAILED, Generation.Status.INVALID):
        return "skipped"  # a duplicate or redelivered message: nothing to do, nothing to pay
    now = timezone.now()
    if gen.status == Generation.Status.RUNNING and gen.lease_expires_at and gen.lease_expires_at > now:
        remaining = (gen.lease_expires_at - now).total_seconds()
        raise TryAgain(f"{gen} is held by another worker", retry_after=remaining + 1, backoff=False)
    if gen.attempts >= conf["max_attempts"]:
        give_up(gen)
        return Generation.Status.FAILED

    target = target_for(gen.system)
    limit = limits.limit_for(provider=target.provider, base_url=target.endpoint_base, parameters=target.parameters)
    try:
        with limits.concurrency_slot(limit, ttl=target.timeout + 30, max_wait=conf["max_wait_seconds"]):
            token = claim(gen, lease_seconds=max(conf["lease_seconds"], target.timeout + 30))
            if token is None:
                return "skipped"
            gen.refresh_from_db()
            system_prompt, user_prompt = render_prompts(study=gen.vignette.study, vignette=gen.vignette)
            try:
                # Last before the call, so that nothing slow comes between the booked slot and the request.
                limits.wait_for_rate(limit, max_wait=conf["max_wait_seconds"])
            except limits.Busy:
                release(gen, token)
                raise
            try:
                reply = client.complete(target, system_prompt=system_prompt, user_prompt=user_prompt)
            except client.Retryable as exc:
                if exc.status == 429 and exc.retry_after:
                    limits.penalise(limit, exc.retry_after)
                return record_retryable(gen, token, exc)
            except client.Permanent as exc:
                return finish(gen, token, status=Generation.Status.FAILED, error=str(exc), outcome="permanent error")
    except limits.Busy as exc:
        raise TryAgain(str(exc), retry_after=exc.retry_after, backoff=False) from exc
    return record_reply(gen, token, reply)


def attempt_entry(gen: Generation, outcome: str, *, error: str = "", reply: client.Reply | None = None) -> dict:
    entry = {"attempt": gen.attempts, "at": timezone.now().isoformat(), "outcome": outcome}
    if error:
        entry["error"] = error[:2000]
    if reply is not None:
        entry.update(
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            latency_ms=round(reply.latency * 1000),
            finish_reason=reply.finish_reason,
        )
    return entry


def finish(gen: Generation, token: str, *, status: str, error: str, outcome: str, **fields) -> str:
    history = [*gen.history, attempt_entry(gen, outcome, error=error)]
    held(gen, token).update(
        status=status,
        error=error,
        claim="",
        finished_at=timezone.now(),
        lease_expires_at=None,
        history=history,
        **fields,
    )
    return status


def give_up(gen: Generation) -> None:
    Generation.objects.filter(pk=gen.pk, status__in=[Generation.Status.PENDING, Generation.Status.RUNNING]).filter(
        Q(status=Generation.Status.PENDING) | Q(lease_expires_at__lt=timezone.now())
    ).update(
        status=Generation.Status.FAILED,
        claim="",
        finished_at=timezone.now(),
        error=(gen.error + "\n" if gen.error else "") + f"Gave up after {gen.attempts} attempts.",
    )


def record_retryable(gen: Generation, token: str, exc: client.Retryable) -> str:
    conf = collect_settings()
    history = [*gen.history, attempt_entry(gen, "retryable error", error=str(exc))]
    if gen.attempts >= conf["max_attempts"]:
        held(gen, token).update(
            status=Generation.Status.FAILED,
            error=f"{exc} (gave up after {gen.attempts} attempts)",
            claim="",
            finished_at=timezone.now(),
            lease_expires_at=None,
            history=history,
        )
        return Generation.Status.FAILED
    held(gen, token).update(
        status=Generation.Status.PENDING,
        error=str(exc),
        raw_response={"status": exc.status, "body": exc.body[:5000]} if exc.status else {},
        claim="",
        lease_expires_at=None,
        queued_at=timezone.now(),
        history=history,
    )
    raise TryAgain(str(exc), retry_after=exc.retry_after, backoff=True)


def record_reply(gen: Generation, token: str, reply: client.Reply) -> str:
    """Store what came back, then either an Answer (DONE), another try, or INVALID for the researcher."""
    conf = collect_settings()
    call_fields = {
        "raw_request": reply.request,
        "raw_response": reply.raw,
        "raw_text": reply.text,
        "input_tokens": F("input_tokens") + reply.input_tokens,
        "output_tokens": F("output_tokens") + reply.output_tokens,
        "cost_estimate": F("cost_estimate") + estimate_cost(gen.system, reply.input_tokens, reply.output_tokens),
        "latency_ms": round(reply.latency * 1000),
        "model_version": reply.model_version[:200],
        "finish_reason": reply.finish_reason[:64],
    }
    try:
        parsed = parse_answer(reply.text)
    except ParseError as exc:
        error = f"Unusable output: {exc}"
        history = [*gen.history, attempt_entry(gen, "invalid output", error=error, reply=reply)]
        invalid_so_far = sum(1 for entry in history if entry.get("outcome") == "invalid output")
        if invalid_so_far >= conf["max_invalid_attempts"] or gen.attempts >= conf["max_attempts"]:
            held(gen, token).update(
                status=Generation.Status.INVALID,
                parse_error=str(exc),
                error=error,
                claim="",
                finished_at=timezone.now(),
                lease_expires_at=None,
                history=history,
                **call_fields,
            )
            return Generation.Status.INVALID
        held(gen, token).update(
            status=Generation.Status.PENDING,
            parse_error=str(exc),
            error=error,
            claim="",
            lease_expires_at=None,
            queued_at=timezone.now(),
            history=history,
            **call_fields,
        )
        raise TryAgain(error, retry_after=0, backoff=False) from exc

    history = [*gen.history, attempt_entry(gen, "answer stored", reply=reply)]
    try:
        with transaction.atomic():
            updated = held(gen, token).update(
                status=Generation.Status.DONE,
                parse_error="",
                error="",
                claim="",
                finished_at=timezone.now(),
                lease_expires_at=None,
                history=history,
                normalised=parsed.normalised,
                original_weights=parsed.original_weights,
                **call_fields,
            )
            if not updated:
                return "skipped"  # our lease ran out and another worker took the row: its result counts
            answer = create_answer(
                system=gen.system,
                vignette=gen.vignette,
                features=parsed.features,
                action=parsed.action,
                additional_information=parsed.additional_information,
                sample=gen.sample,
                raw_text=reply.text,
                origin=Answer.Origin.LLM,
            )
            Generation.objects.filter(pk=gen.pk).update(answer=answer)
            select_first_valid(answer)
    except (IntegrityError, ValidationError) as exc:
        # Only if someone stored this sample by another route meanwhile: keep the reply, flag the row.
        history[-1]["outcome"] = "not stored"
        Generation.objects.filter(pk=gen.pk, status__in=[Generation.Status.RUNNING]).update(
            status=Generation.Status.FAILED,
            error=f"The reply could not be stored as an answer: {exc}",
            claim="",
            finished_at=timezone.now(),
            history=history,
            **call_fields,
        )
        return Generation.Status.FAILED
    return Generation.Status.DONE


def select_first_valid(answer: Answer) -> None:
    """Select the lowest-numbered valid LLM sample, while the study is a draft and no person chose otherwise."""
    if answer.vignette.study.status != Study.Status.DRAFT:
        return
    System.objects.select_for_update().filter(pk=answer.system_id).first()  # one selection at a time per system
    current = Answer.objects.filter(system=answer.system_id, vignette=answer.vignette_id, selected=True).first()
    automatic = current is not None and current.origin == Answer.Origin.LLM and current.selected_by_id is None
    if current is None or (automatic and current.sample > answer.sample):
        select_answer(answer=answer)
