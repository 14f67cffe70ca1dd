"""Starting collection runs, asking failed rows again, and the sweep that re-queues what was lost."""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from surveys.models import Answer, Study, System

from .. import client
from ..models import CollectionRun, Generation
from .calling import give_up
from .config import collect_settings, target_for
from .states import move

log = logging.getLogger(__name__)


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
    from .. import tasks

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
                    move(
                        gen,
                        from_=(Generation.Status.PENDING,),
                        to=Generation.Status.DONE,
                        outcome="already answered",
                        error="An answer for this sample already existed; not asked.",
                        answer=Answer.objects.get(system=system, vignette=vignette, sample=sample),
                    )
                    already += 1
                    continue
                if gen.status in (Generation.Status.FAILED, Generation.Status.INVALID):
                    if not retry_failed:
                        continue
                    ask_again(gen, run=run)
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
    ids = [gen.pk for gen in rows if ask_again(gen)]
    queue(ids)
    return len(ids)


def ask_again(gen: Generation, **fields) -> bool:
    """A failed or invalid row back to PENDING with a fresh set of attempts."""
    done_with = (Generation.Status.FAILED, Generation.Status.INVALID)
    return move(gen, from_=done_with, to=Generation.Status.PENDING, outcome="asked again", attempts=0, **fields)


def sweep_generations(*, older_than_minutes: float | None = None) -> int:
    """Queue again what lost its message; fail rows at the attempts cap. Beat runs it every few seconds.

    - RUNNING rows whose lease ran out: their worker died (a live one renews the lease while it works).
    - PENDING rows whose retry was due ``sweep_grace_seconds`` ago: the worker holding that retry died.
    - PENDING rows whose message waited in the broker ``sweep_minutes``: lost there (Redis flushed, say).
    """
    conf = collect_settings()
    minutes = conf["sweep_minutes"] if older_than_minutes is None else older_than_minutes
    now = timezone.now()
    overdue = now - timedelta(seconds=conf["sweep_grace_seconds"])
    stale = Generation.objects.filter(
        Q(status=Generation.Status.PENDING, queued_at__lt=now - timedelta(minutes=minutes))
        | Q(status=Generation.Status.PENDING, not_before__lt=overdue)
        | Q(status=Generation.Status.RUNNING, lease_expires_at__lt=now)
    )
    for gen in stale.filter(attempts__gte=conf["max_attempts"]):
        give_up(gen)
    requeued = []
    with transaction.atomic():
        for pk, queued_at in stale.filter(attempts__lt=conf["max_attempts"]).values_list("pk", "queued_at"):
            # The new message waits in the broker: no retry is due at a worker any more.
            if Generation.objects.filter(pk=pk, queued_at=queued_at).update(queued_at=now, not_before=None):
                requeued.append(pk)
        queue(requeued)
    if requeued:
        log.info("llm_collect sweep re-queued %d generations", len(requeued))
    return len(requeued)
