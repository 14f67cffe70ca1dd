"""Starting collection runs, asking failed rows again, and the sweep that re-queues what was lost."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from surveys.models import Answer, AuditEvent, Study, System, Vignette
from surveys.services.audit import record_event

from .. import calls
from ..calls.estimates import CallsEstimate, calls_to_make, estimate_calls
from ..calls.runs import existing_or_created, plan
from ..calls.states import ask_again
from ..models import CollectionRun, Generation

ALREADY_ANSWERED = "An answer for this sample already existed; not asked."


def queue(generation_ids: list[int]) -> None:
    """One collect task per id, sent when the transaction commits (calls/queueing.py)."""
    from .. import tasks

    calls.send_on_commit(tasks.collect, Generation, generation_ids)


def systems_to_ask(study: Study, system_keys: list[str] | None) -> list[System]:
    llm_systems = list(study.systems.filter(kind=System.Kind.LLM))
    if system_keys:
        by_key = {s.key: s for s in llm_systems}
        unknown = [key for key in system_keys if key not in by_key]
        if unknown:
            raise ValidationError(f"Study '{study.slug}' has no LLM system with key(s): {', '.join(unknown)}.")
        llm_systems = [by_key[key] for key in system_keys]
    if not llm_systems:
        raise ValidationError(f"Study '{study.slug}' has no LLM systems to collect from.")
    return llm_systems


def start_collection(
    *, study: Study, system_keys: list[str] | None = None, samples: int = 5, user=None, retry_failed: bool = False
) -> CollectionRun:
    """Create a Generation for each LLM system × vignette × sample and queue one task for each on commit.

    Re-running is safe: existing rows are reused, finished ones are not asked again, and a sample that already
    has an Answer (imported, say) is left alone. ``retry_failed`` gives failed and invalid rows (refusals and
    blocks included) a fresh set of attempts. Nothing is written when a key is missing or not allowed, or when
    the broker does not answer (calls.BrokerUnavailable).
    """
    if samples < 1:
        raise ValidationError("Ask for at least one sample.")
    systems = systems_to_ask(study, system_keys)
    vignettes = list(study.vignettes.all())
    if not vignettes:
        raise ValidationError(f"Study '{study.slug}' has no vignettes.")
    calls.ready_to_start(systems)
    with transaction.atomic():
        run = CollectionRun.objects.create(study=study, samples=samples, created_by=user)
        run.systems.set(systems)
        rows = generations_for(run, systems, vignettes, samples)
        queue(plan(run, rows, retry_failed=retry_failed))
        paid = {"run": run.pk, "planned": run.planned, "systems": [s.key for s in systems], "samples": samples}
        record_event(action=AuditEvent.Action.COLLECTION_STARTED, user=user, study=study, **paid)
    return run


def preview_collection(
    *, study: Study, system_keys: list[str] | None = None, samples: int = 5, retry_failed: bool = False
) -> list[CallsEstimate]:
    """What `start_collection` would ask of each system, and its estimated cost; nothing written or queued."""
    if samples < 1:
        raise ValidationError("Ask for at least one sample.")
    systems = systems_to_ask(study, system_keys)
    vignettes = list(study.vignettes.values_list("pk", flat=True))
    if not vignettes:
        raise ValidationError(f"Study '{study.slug}' has no vignettes.")
    rows = Generation.objects.filter(system__in=systems, vignette__study=study, sample__lte=samples)
    statuses = {
        (g.system_id, g.vignette_id, g.sample): g.status for g in rows.only("system", "vignette", "sample", "status")
    }
    answered = Answer.objects.filter(system__in=systems, vignette__study=study, sample__lte=samples)
    statuses |= {key: Generation.Status.DONE for key in answered.values_list("system_id", "vignette_id", "sample")}
    return [
        estimate_calls(
            system,
            calls=calls_to_make(
                statuses,
                ((system.pk, v, n) for v in vignettes for n in range(1, samples + 1)),
                retry_failed=retry_failed,
            ),
            earlier=Generation.objects.filter(system=system),
        )
        for system in systems
    ]


def generations_for(run: CollectionRun, systems: list[System], vignettes: list[Vignette], samples: int) -> list:
    """Every Generation the run wants, sample-major, then vignette, then system (providers interleave in the
    queue, first samples go first); missing ones made in bulk, already DONE where an Answer exists."""
    wanted = [(s.pk, v.pk, n) for n in range(1, samples + 1) for v in vignettes for s in systems]
    answers = {
        (a.system_id, a.vignette_id, a.sample): a.pk
        for a in Answer.objects.filter(system__in=systems, vignette__in=vignettes, sample__lte=samples)
    }
    now = timezone.now()

    def make(key: tuple) -> Generation:
        system_id, vignette_id, sample = key
        gen = Generation(system_id=system_id, vignette_id=vignette_id, sample=sample, run=run)
        if key in answers:  # imported, say: recorded as done, never asked
            entry = {"attempt": 0, "at": now.isoformat(), "outcome": "already answered", "error": ALREADY_ANSWERED}
            gen.status, gen.answer_id, gen.finished_at = Generation.Status.DONE, answers[key], now
            gen.error, gen.history = ALREADY_ANSWERED, [entry]
        return gen

    existing = Generation.objects.filter(system__in=systems, vignette__in=vignettes, sample__lte=samples)
    found = existing_or_created(
        existing, key=lambda g: (g.system_id, g.vignette_id, g.sample), wanted=wanted, make=make
    )
    return [found[key] for key in wanted]


def _to_ask_again(generation_ids: list[int]):
    return Generation.objects.filter(
        pk__in=generation_ids, status__in=[Generation.Status.FAILED, Generation.Status.INVALID]
    ).select_related("system", "vignette__study")


def preview_retry(*, generation_ids: list[int]) -> list[CallsEstimate]:
    """What 'Ask again' would ask of each system (only failed or invalid rows are), and its estimated cost."""
    per_system: dict[int, list[Generation]] = {}
    for gen in _to_ask_again(generation_ids):
        per_system.setdefault(gen.system_id, []).append(gen)
    return [
        estimate_calls(rows[0].system, calls=len(rows), earlier=Generation.objects.filter(system_id=system_id))
        for system_id, rows in per_system.items()
    ]


@transaction.atomic
def retry_generations(*, generation_ids: list[int], user=None) -> int:
    """Give failed or invalid rows (refused and blocked included) a fresh set of attempts and queue them;
    audited per study (paid calls)."""
    rows = list(_to_ask_again(generation_ids))
    asked = [gen for gen in rows if ask_again(gen)]
    queue([gen.pk for gen in asked])
    studies: dict[int, list[Generation]] = {}
    for gen in asked:
        studies.setdefault(gen.vignette.study_id, []).append(gen)
    for study_rows in studies.values():
        record_event(
            action=AuditEvent.Action.COLLECTION_RETRIED,
            user=user,
            study=study_rows[0].vignette.study,
            generations=[gen.pk for gen in study_rows],
            systems=sorted({gen.system.key for gen in study_rows}),
        )
    return len(asked)


def sweep_generations(*, older_than_minutes: float | None = None) -> int:
    """Queue again what lost its message; fail rows at the attempts cap (calls/queueing.py). Beat: every 15 s."""
    return calls.sweep(Generation, queue, older_than_minutes=older_than_minutes)
