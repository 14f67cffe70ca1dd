"""Starting judging runs, and the sweep that queues again what a dead worker or a lost message left behind."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from llm_collect import calls
from llm_collect.calls.estimates import CallsEstimate, calls_to_make, estimate_calls
from llm_collect.calls.runs import existing_or_created, plan
from surveys.models import AuditEvent, Cell, Study, System
from surveys.services.audit import record_event

from ..models import JudgeCall, JudgeModel, JudgingRun


def judges_from_keys(*, study: Study, keys: list[str]) -> list[JudgeModel]:
    """The study's JudgeModels named (a key names a judge within its study: another team's of the same key is
    never found); a name with none yet but a study LLM System of that key or model is copied from it."""
    judges = []
    for key in keys:
        judge = JudgeModel.objects.filter(study=study, key=key).first()
        if judge is None:
            system = study.systems.filter(Q(key=key) | Q(model=key), kind=System.Kind.LLM).first()
            if system is None:
                raise ValidationError(
                    f"Study '{study.slug}' has no judge model '{key}': add it in the admin (LLM judging → Judge "
                    f"models, with this study), or give the study an LLM system with that key or model to copy."
                )
            judge = JudgeModel.objects.create(
                study=study,
                key=key,
                provider=system.provider,
                model=system.model,
                base_url=system.base_url,
                api_key_env=system.api_key_env,
                parameters=system.parameters,
            )
        judges.append(judge)
    return judges


def check_judges_of(*, study: Study, judges: list[JudgeModel]) -> None:
    """Refuse judge models that are not the study's: another team's would send this study's answers where that
    team chose (and bill its key), and one without a study is a superuser's to give to a study first."""
    others = sorted(judge.key for judge in judges if judge.study_id != study.pk)
    if others:
        raise ValidationError(
            f"Not judge models of study '{study.slug}': {', '.join(others)}. "
            "A run uses only its study's judge models (LLM judging → Judge models)."
        )


def queue(call_ids: list[int]) -> None:
    """One judge task per id, sent when the transaction commits (llm_collect/calls/queueing.py)."""
    from .. import tasks

    calls.send_on_commit(tasks.judge, JudgeCall, call_ids)


def start_judging_run(
    *,
    study: Study,
    judges: list[JudgeModel],
    samples: int = 1,
    orders: str = JudgingRun.Orders.BOTH,
    user=None,
    retry_failed: bool = False,
) -> JudgingRun:
    """A JudgeCall per judge × cell × order × sample, each queued once on commit.

    Re-running is safe: rows are made once on their unique key and finished ones are not asked again;
    ``retry_failed`` gives failed and flagged rows (refusals and blocks included) a fresh set of attempts.
    Nothing is written when a key is missing or not allowed, or when the broker does not answer.
    """
    if samples < 1:
        raise ValidationError("Ask for at least one sample.")
    if orders not in JudgingRun.Orders.values:
        raise ValidationError(f"orders must be one of {', '.join(JudgingRun.Orders.values)}.")
    if not judges:
        raise ValidationError("Choose at least one judge model.")
    check_judges_of(study=study, judges=judges)
    cells = list(study.cells.select_related("answer_a", "answer_b").order_by("vignette_id", "id"))
    if not cells:
        raise ValidationError(f"Study '{study.slug}' has no cells yet: they are made when it goes live.")
    calls.ready_to_start(judges)
    with transaction.atomic():
        run = JudgingRun.objects.create(study=study, samples=samples, orders=orders, created_by=user)
        run.judges.set(judges)
        queue(plan(run, judge_calls_for(run, judges, cells), retry_failed=retry_failed))
        paid = {"run": run.pk, "planned": run.planned, "judges": [j.key for j in judges], "samples": samples}
        record_event(action=AuditEvent.Action.JUDGING_STARTED, user=user, study=study, **paid)
    return run


def preview_judging_run(
    *,
    study: Study,
    judges: list[JudgeModel],
    samples: int = 1,
    orders: str = JudgingRun.Orders.BOTH,
    retry_failed: bool = False,
) -> list[CallsEstimate]:
    """What `start_judging_run` would ask of each judge, and its estimated cost; nothing written or queued."""
    if samples < 1:
        raise ValidationError("Ask for at least one sample.")
    if not judges:
        raise ValidationError("Choose at least one judge model.")
    check_judges_of(study=study, judges=judges)
    cells = list(study.cells.values_list("pk", flat=True))
    if not cells:
        raise ValidationError(f"Study '{study.slug}' has no cells yet: they are made when it goes live.")
    kinds = [JudgeCall.Order.AB.value, JudgeCall.Order.BA.value]
    kinds = kinds if orders == JudgingRun.Orders.BOTH else kinds[:1]
    rows = JudgeCall.objects.filter(judge__in=judges, cell__study=study, sample__lte=samples)
    statuses = {
        (c.judge_id, c.cell_id, c.order, c.sample): c.status
        for c in rows.only("judge", "cell", "order", "sample", "status")
    }
    return [
        estimate_calls(
            judge,
            calls=calls_to_make(
                statuses,
                ((judge.pk, cell, order, n) for cell in cells for order in kinds for n in range(1, samples + 1)),
                retry_failed=retry_failed,
            ),
            earlier=JudgeCall.objects.filter(judge=judge),
        )
        for judge in judges
    ]


def judge_calls_for(run: JudgingRun, judges: list[JudgeModel], cells: list[Cell]) -> list[JudgeCall]:
    """Every JudgeCall the run wants, sample-major, then order, then cell, then judge (providers interleave in
    the queue, first samples go first); the missing ones made in bulk."""
    # Plain strings: they key a dict, and a TextChoices member hashes by its name, not its value.
    orders = [JudgeCall.Order.AB.value, JudgeCall.Order.BA.value]
    orders = orders if run.orders == JudgingRun.Orders.BOTH else orders[:1]
    by_pk = {cell.pk: cell for cell in cells}
    wanted = [
        (judge.pk, cell.pk, order, sample)
        for sample in range(1, run.samples + 1)
        for order in orders
        for cell in cells
        for judge in judges
    ]

    def make(key: tuple) -> JudgeCall:
        judge_id, cell_id, order, sample = key
        cell = by_pk[cell_id]
        first, second = (cell.answer_a, cell.answer_b) if order == "ab" else (cell.answer_b, cell.answer_a)
        return JudgeCall(judge_id=judge_id, cell=cell, order=order, sample=sample, run=run,
                         first_answer=first, second_answer=second)  # fmt: skip

    existing = JudgeCall.objects.filter(judge__in=judges, cell__in=cells)
    found = existing_or_created(
        existing, key=lambda c: (c.judge_id, c.cell_id, c.order, c.sample), wanted=wanted, make=make
    )
    return [found[key] for key in wanted]


def sweep_judge_calls(*, older_than_minutes: float | None = None) -> int:
    """Queue again rows whose worker died or whose message was lost; fail rows at the attempts cap."""
    return calls.sweep(JudgeCall, queue, older_than_minutes=older_than_minutes)
