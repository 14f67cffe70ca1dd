"""One idempotent collection step per Generation: claim, call, record.

Idempotency (STYLE.md section 5): a Generation row is created once per system × vignette × sample and every
state change is a conditional UPDATE (services/states.py). A worker *claims* a row before it calls the provider,
keeps the claim's short lease alive while it works, and writes the result only while it still holds that claim.
So a duplicate or redelivered message for a finished row does nothing (no call, no cost), one for a row another
worker holds waits for the lease, a worker that was killed frees its row within one lease (the sweep queues it
again), and a worker that was presumed dead and comes back late cannot store a second Answer. The Answer table's
own unique (system, vignette, sample) is the last guard.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from surveys.models import Answer, Study, System
from surveys.services.answers import create_answer, select_answer

from .. import client, limits
from ..models import Generation
from ..parsing import ParseError, parse_answer
from ..prompts import render_prompts
from .config import TryAgain, collect_settings, estimate_cost, target_for
from .states import keep_alive, move, take

Status = Generation.Status


def claim(gen: Generation, *, lease_seconds: float) -> str | None:
    """Take the row for one provider call; None if someone else has it, it is done, or it is at the cap."""
    return take(gen, lease_seconds=lease_seconds, max_attempts=collect_settings()["max_attempts"])


def collect(*, generation_id: int, retries: int = 0) -> str:
    """One step for one Generation. Returns the row's status afterwards ("skipped" when there was nothing to do).

    Raises TryAgain (with the delay to wait) when the task should run again later: no rate or concurrency slot
    free, a provider error worth retrying, unusable output with attempts left, or another worker's lease still
    running. ``retries`` is how often the task has been retried, for the backoff.
    """
    conf = collect_settings()
    gen = Generation.objects.select_related("system", "vignette__study").filter(pk=generation_id).first()
    if gen is None or gen.status in (Status.DONE, Status.FAILED, Status.INVALID):
        return "skipped"  # a duplicate or redelivered message: nothing to do, nothing to pay
    now = timezone.now()
    if gen.status == Status.RUNNING and gen.lease_expires_at and gen.lease_expires_at > now:
        remaining = (gen.lease_expires_at - now).total_seconds()
        raise TryAgain(f"{gen} is held by another worker", retry_after=remaining + 1, backoff=False, retries=retries)
    if gen.attempts >= conf["max_attempts"]:
        give_up(gen)
        return Status.FAILED

    target = target_for(gen.system)
    limit = limits.limit_for(provider=target.provider, base_url=target.endpoint_base, parameters=target.parameters)
    lease = conf["lease_seconds"]
    token = claim(gen, lease_seconds=lease)
    if token is None:
        return "skipped"
    gen.refresh_from_db()
    slot = limits.concurrency_slot(limit, ttl=lease, max_wait=conf["max_wait_seconds"])
    with keep_alive(gen, token, lease_seconds=lease, also=(slot.refresh,)):
        try:
            with slot:
                system_prompt, user_prompt = render_prompts(study=gen.vignette.study, vignette=gen.vignette)
                # Last before the call, so that nothing slow comes between the booked slot and the request.
                limits.wait_for_rate(limit, max_wait=conf["max_wait_seconds"])
                try:
                    reply = client.complete(target, system_prompt=system_prompt, user_prompt=user_prompt)
                except client.Retryable as exc:
                    if exc.status == 429 and exc.retry_after:
                        limits.penalise(limit, exc.retry_after)
                    return record_retryable(gen, token, exc, retries=retries)
                except client.Permanent as exc:
                    move(gen, token=token, to=Status.FAILED, outcome="permanent error", error=str(exc))
                    return Status.FAILED
        except limits.Busy as exc:
            again = TryAgain(str(exc), retry_after=exc.retry_after, backoff=False, retries=retries)
            # Given back uncalled: the attempt is not counted.
            move(
                gen,
                token=token,
                to=Status.PENDING,
                outcome="not called: " + str(exc),
                not_before=again.due,
                attempts=F("attempts") - 1,
            )
            raise again from exc
    return record_reply(gen, token, reply, retries=retries)


def give_up(gen: Generation) -> None:
    """Fail a row that used up its attempts, if nobody holds it."""
    error = (gen.error + "\n" if gen.error else "") + f"Gave up after {gen.attempts} attempts."
    move(gen, to=Status.FAILED, outcome="gave up", error=error)


def record_retryable(gen: Generation, token: str, exc: client.Retryable, *, retries: int = 0) -> str:
    if gen.attempts >= collect_settings()["max_attempts"]:
        error = f"{exc} (gave up after {gen.attempts} attempts)"
        move(gen, token=token, to=Status.FAILED, outcome="retryable error", error=error)
        return Status.FAILED
    again = TryAgain(str(exc), retry_after=exc.retry_after, backoff=True, retries=retries)
    move(
        gen,
        token=token,
        to=Status.PENDING,
        outcome="retryable error",
        error=str(exc),
        not_before=again.due,
        raw_response={"status": exc.status, "body": exc.body[:5000]} if exc.status else {},
    )
    raise again


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


def record_reply(gen: Generation, token: str, reply: client.Reply, *, retries: int = 0) -> str:
    """Store what came back, then either an Answer (DONE), another try, or INVALID for the researcher."""
    conf = collect_settings()
    call_fields = reply_fields(reply, configured=gen.system)
    try:
        parsed = parse_answer(reply.text)
    except ParseError as exc:
        error = f"Unusable output: {exc}"
        invalid_so_far = 1 + sum(1 for entry in gen.history if entry.get("outcome") == "invalid output")
        if invalid_so_far >= conf["max_invalid_attempts"] or gen.attempts >= conf["max_attempts"]:
            move(
                gen,
                token=token,
                to=Status.INVALID,
                outcome="invalid output",
                error=error,
                reply=reply,
                parse_error=str(exc),
                **call_fields,
            )
            return Status.INVALID
        again = TryAgain(error, retry_after=0, backoff=False, retries=retries)
        move(
            gen,
            token=token,
            to=Status.PENDING,
            outcome="invalid output",
            error=error,
            reply=reply,
            not_before=again.due,
            parse_error=str(exc),
            **call_fields,
        )
        raise again from exc

    try:
        with transaction.atomic():
            stored = move(
                gen,
                token=token,
                to=Status.DONE,
                outcome="answer stored",
                error="",
                reply=reply,
                parse_error="",
                normalised=parsed.normalised,
                original_weights=parsed.original_weights,
                **call_fields,
            )
            if not stored:
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
        error = f"The reply could not be stored as an answer: {exc}"
        move(gen, token=token, to=Status.FAILED, outcome="not stored", error=error, reply=reply, **call_fields)
        return Status.FAILED
    return Status.DONE


def select_first_valid(answer: Answer) -> None:
    """Select the lowest-numbered valid LLM sample, while the study is a draft and no person chose otherwise."""
    if answer.vignette.study.status != Study.Status.DRAFT:
        return
    System.objects.select_for_update().filter(pk=answer.system_id).first()  # one selection at a time per system
    current = Answer.objects.filter(system=answer.system_id, vignette=answer.vignette_id, selected=True).first()
    automatic = current is not None and current.origin == Answer.Origin.LLM and current.selected_by_id is None
    if current is None or (automatic and current.sample > answer.sample):
        select_answer(answer=answer)
