"""Collecting answers from LLMs: starting a run, one idempotent collection step per Generation, the sweep.

Idempotency (STYLE.md section 5): a Generation row is created once per system × vignette × sample and every
state change is a conditional UPDATE. A worker *claims* a row (PENDING, or RUNNING whose lease has run out →
RUNNING with a fresh claim token and lease) before it calls the provider, and writes the result only while
it still holds that claim. So a duplicate or redelivered message for a finished row does nothing (no call,
no cost), one for a row another worker holds waits for the lease, and a worker that was presumed dead and
comes back late cannot store a second Answer. The Answer table's own unique (system, vignette, sample) is the
last guard.
"""

from __future__ import annotations

import logging
import random
import uuid
from datetime import timedelta
from decimal import Decimal
from functools import partial

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from surveys.answers import create_answer, select_answer
from surveys.models import Answer, Study, System

from . import client, limits
from .models import CollectionRun, Generation
from .parsing import ParseError, parse_answer
from .prompts import render_prompts

log = logging.getLogger(__name__)

DEFAULTS = {
    "lease_seconds": 300,  # a claimed row is someone else's for this long (longer than any call)
    "max_attempts": 5,  # provider calls per Generation, whatever went wrong
    "max_invalid_attempts": 3,  # of which at most this many may return unusable output
    "max_wait_seconds": 15,  # a worker sleeps this long at most for a rate or concurrency slot
    "sweep_minutes": 15,  # pending rows older than this are queued again
    "backoff_base_seconds": 2,
    "backoff_cap_seconds": 300,
    "queue": None,  # a Celery queue of their own for these slow, I/O-bound tasks (None: the default queue)
}

# Estimated USD per million tokens (input, output), list prices at the time of writing. Estimates only:
# providers change prices and bill cached or reasoning tokens differently. Longest matching prefix wins;
# a System's parameters may set "price_per_million": [input, output].
PRICES_PER_MILLION = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "o1-mini": (1.10, 4.40),
    "o1": (15.00, 60.00),
    "o3-mini": (1.10, 4.40),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "gemini-1.5-flash": (0.075, 0.30),
    "gemini-1.5-pro": (1.25, 5.00),
    "deepseek-chat": (0.27, 1.10),
    "llama-3.3-70b": (0.60, 0.60),
    "meta-llama/llama-3.3-70b": (0.60, 0.60),
}


class TryAgain(Exception):
    """Nothing was stored for good: the task should run again after a delay."""

    def __init__(self, message: str, *, retry_after: float | None = None, backoff: bool = True) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.backoff = backoff


def collect_settings() -> dict:
    return {**DEFAULTS, **getattr(settings, "LLM_COLLECT", {})}


def target_for(system: System) -> client.Target:
    return client.Target(
        provider=system.provider,
        model=system.model,
        base_url=system.base_url,
        api_key_env=system.api_key_env,
        parameters=dict(system.parameters or {}),
        label=system.key,
    )


def estimate_cost(system: System, input_tokens: int, output_tokens: int) -> Decimal:
    prices = (system.parameters or {}).get("price_per_million")
    if not prices:
        model = system.model.lower()
        matches = [prefix for prefix in PRICES_PER_MILLION if model.startswith(prefix) or f"/{prefix}" in model]
        prices = PRICES_PER_MILLION[max(matches, key=len)] if matches else (0, 0)
    cost = (input_tokens * float(prices[0]) + output_tokens * float(prices[1])) / 1_000_000
    return Decimal(f"{cost:.6f}")


def retry_delay(*, retries: int, retry_after: float | None, backoff: bool) -> float:
    """Exponential backoff with jitter, never sooner than the provider's Retry-After."""
    conf = collect_settings()
    if backoff:
        ceiling = min(conf["backoff_cap_seconds"], conf["backoff_base_seconds"] * 2**retries)
        delay = ceiling / 2 + random.uniform(0, ceiling / 2)
    else:
        delay = random.uniform(0, 1)
    if retry_after is not None:
        delay = max(delay, retry_after + random.uniform(0, 0.5))
    return delay


def missing_keys(systems: list[System]) -> list[str]:
    problems = []
    for system in systems:
        try:
            client.api_key(target_for(system))
        except client.MissingKey as exc:
            problems.append(str(exc))
    return problems


def queue(generation_ids: list[int]) -> None:
    """One collect task per id, sent when the transaction commits (to LLM_COLLECT["queue"] if set)."""
    from . import tasks

    options = {"queue": collect_settings()["queue"]} if collect_settings()["queue"] else {}
    for generation_id in generation_ids:
        transaction.on_commit(partial(tasks.collect.apply_async, (generation_id,), **options))


@transaction.atomic
def start_collection(
    *,
    study: Study,
    system_keys: list[str] | None = None,
    samples: int = 5,
    user=None,
    retry_failed: bool = False,
) -> CollectionRun:
    """Create a Generation for each LLM system × vignette × sample and queue one task for each on commit.

    Re-running is safe: existing rows are reused (get_or_create), finished ones are not asked again, and a
    sample that already has an Answer (imported, say) is left alone. ``retry_failed`` gives failed and invalid
    rows a fresh set of attempts.
    """
    if samples < 1:
        raise ValidationError("Ask for at least one sample.")
    llm_systems = list(study.systems.filter(kind=System.Kind.LLM))
    if system_keys:
        by_key = {s.key: s for s in llm_systems}
        unknown = [key for key in system_keys if key not in by_key]
        if unknown:
            raise ValidationError(f"Study '{study.slug}' has no LLM system with key(s): {', '.join(unknown)}.")
        llm_systems = [by_key[key] for key in system_keys]
    if not llm_systems:
        raise ValidationError(f"Study '{study.slug}' has no LLM systems to collect from.")
    vignettes = list(study.vignettes.all())
    if not vignettes:
        raise ValidationError(f"Study '{study.slug}' has no vignettes.")
    problems = missing_keys(llm_systems)
    if problems:
        raise ValidationError(problems)

    run = CollectionRun.objects.create(study=study, samples=samples, created_by=user)
    run.systems.set(llm_systems)
    answered = set(
        Answer.objects.filter(system__in=llm_systems, vignette__in=vignettes).values_list(
            "system_id", "vignette_id", "sample"
        )
    )
    to_queue, already = [], 0
    # Sample-major, then vignette, then system: the queue interleaves providers and first samples go first.
    for sample in range(1, samples + 1):
        for vignette in vignettes:
            for system in llm_systems:
                gen, created = Generation.objects.get_or_create(
                    system=system, vignette=vignette, sample=sample, defaults={"run": run}
                )
                if not created and gen.status == Generation.Status.DONE:
                    already += 1
                    continue
                if created and (system.pk, vignette.pk, sample) in answered:
                    Generation.objects.filter(pk=gen.pk).update(
                        status=Generation.Status.DONE,
                        finished_at=timezone.now(),
                        error="An answer for this sample already existed; not asked.",
                        answer=Answer.objects.get(system=system, vignette=vignette, sample=sample),
                    )
                    already += 1
                    continue
                if gen.status in (Generation.Status.FAILED, Generation.Status.INVALID):
                    if not retry_failed:
                        continue
                    Generation.objects.filter(pk=gen.pk, status=gen.status).update(
                        status=Generation.Status.PENDING, attempts=0, run=run, queued_at=timezone.now()
                    )
                elif not created:
                    Generation.objects.filter(pk=gen.pk).update(run=run)
                to_queue.append(gen.pk)
    run.planned = len(to_queue)
    run.already_present = already
    run.save(update_fields=["planned", "already_present"])
    queue(to_queue)
    return run


@transaction.atomic
def retry_generations(*, generation_ids: list[int]) -> int:
    """Give failed or invalid rows a fresh set of attempts and queue them."""
    rows = Generation.objects.filter(
        pk__in=generation_ids, status__in=[Generation.Status.FAILED, Generation.Status.INVALID]
    )
    ids = list(rows.values_list("pk", flat=True))
    Generation.objects.filter(pk__in=ids).update(status=Generation.Status.PENDING, attempts=0, queued_at=timezone.now())
    queue(ids)
    return len(ids)


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
            limits.wait_for_rate(limit, max_wait=conf["max_wait_seconds"])
            token = claim(gen, lease_seconds=max(conf["lease_seconds"], target.timeout + 30))
            if token is None:
                return "skipped"
            gen.refresh_from_db()
            system_prompt, user_prompt = render_prompts(study=gen.vignette.study, vignette=gen.vignette)
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


def sweep_generations(*, older_than_minutes: float | None = None) -> int:
    """Queue again rows still pending after N minutes and running rows whose lease ran out; fail rows at the cap."""
    conf = collect_settings()
    minutes = conf["sweep_minutes"] if older_than_minutes is None else older_than_minutes
    now = timezone.now()
    cutoff = now - timedelta(minutes=minutes)
    stale = Generation.objects.filter(
        Q(status=Generation.Status.PENDING, queued_at__lt=cutoff)
        | Q(status=Generation.Status.RUNNING, lease_expires_at__lt=now)
    )
    for gen in stale.filter(attempts__gte=conf["max_attempts"]):
        give_up(gen)
    requeued = []
    with transaction.atomic():
        for pk, queued_at in stale.filter(attempts__lt=conf["max_attempts"]).values_list("pk", "queued_at"):
            if Generation.objects.filter(pk=pk, queued_at=queued_at).update(queued_at=now):
                requeued.append(pk)
        queue(requeued)
    if requeued:
        log.info("llm_collect sweep re-queued %d generations", len(requeued))
    return len(requeued)
