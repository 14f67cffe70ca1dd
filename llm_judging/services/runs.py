"""Starting judging runs, and the sweep that queues again what a dead worker or a lost message left behind."""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from llm_collect.services import missing_keys
from llm_collect.services.calling import give_up
from llm_collect.services.config import collect_settings
from llm_collect.services.states import move
from surveys.models import Study, System

from ..models import JudgeCall, JudgeModel, JudgingRun

log = logging.getLogger(__name__)
Status = JudgeCall.Status


def judges_from_keys(*, study: Study, keys: list[str]) -> list[JudgeModel]:
    """The JudgeModels named; a name with none yet but a study LLM System of that key or model is copied from it."""
    judges = []
    for key in keys:
        judge = JudgeModel.objects.filter(key=key).first()
        if judge is None:
            system = study.systems.filter(Q(key=key) | Q(model=key), kind=System.Kind.LLM).first()
            if system is None:
                raise ValidationError(
                    f"No judge model '{key}': add it in the admin (LLM judging → Judge models), "
                    f"or give the study an LLM system with that key or model to copy."
                )
            judge = JudgeModel.objects.create(
                key=key,
                provider=system.provider,
                model=system.model,
                base_url=system.base_url,
                api_key_env=system.api_key_env,
                parameters=system.parameters,
            )
        judges.append(judge)
    return judges


def queue(call_ids: list[int]) -> None:
    """One judge task per id, sent when the transaction commits (to LLM_COLLECT["queue"] like collection)."""
    from .. import tasks

    options = {"queue": collect_settings()["queue"]} if collect_settings()["queue"] else {}
    for call_id in call_ids:
        transaction.on_commit(partial(tasks.judge.apply_async, (call_id,), **options))


@transaction.atomic
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
    ``retry_failed`` gives failed and flagged rows a fresh set of attempts.
    """
    if samples < 1:
        raise ValidationError("Ask for at least one sample.")
    if orders not in JudgingRun.Orders.values:
        raise ValidationError(f"orders must be one of {', '.join(JudgingRun.Orders.values)}.")
    if not judges:
        raise ValidationError("Choose at least one judge model.")
    cells = list(study.cells.select_related("answer_a", "answer_b").order_by("vignette_id", "id"))
    if not cells:
        raise ValidationError(f"Study '{study.slug}' has no cells yet: they are made when it goes live.")
    problems = missing_keys(judges)
    if problems:
        raise ValidationError(problems)
    run = JudgingRun.objects.create(study=study, samples=samples, orders=orders, created_by=user)
    run.judges.set(judges)
    # Plain strings: they key a dict below, and a TextChoices member hashes by its name, not its value.
    wanted_orders = (
        [JudgeCall.Order.AB.value, JudgeCall.Order.BA.value]
        if orders == JudgingRun.Orders.BOTH
        else [JudgeCall.Order.AB.value]
    )
    # Sample-major, then order, then cell, then judge: providers interleave, and first samples go first.
    wanted = [
        (judge, cell, order, sample)
        for sample in range(1, samples + 1)
        for order in wanted_orders
        for cell in cells
        for judge in judges
    ]
    calls = existing_or_created_calls(run=run, wanted=wanted)
    to_queue, already, still_waiting = [], 0, []
    for judge, cell, order, sample in wanted:
        call = calls[(judge.pk, cell.pk, order, sample)]
        if call.status == Status.DONE:
            already += 1
            continue
        if call.status in (Status.FAILED, Status.INVALID):
            if not retry_failed:
                continue
            move(call, from_=(Status.FAILED, Status.INVALID), to=Status.PENDING, outcome="asked again",
                 attempts=0, run=run)  # fmt: skip
        elif call.run_id != run.pk:
            still_waiting.append(call.pk)
        to_queue.append(call.pk)
    JudgeCall.objects.filter(pk__in=still_waiting).update(run=run)
    run.planned = len(to_queue)
    run.already_present = already
    run.save(update_fields=["planned", "already_present"])
    queue(to_queue)
    return run


def existing_or_created_calls(*, run: JudgingRun, wanted: list[tuple]) -> dict[tuple, JudgeCall]:
    """Every wanted (judge, cell, order, sample) row, the missing ones created for `run`, keyed by ids.

    In bulk (three queries, not two per row: at 1,344 rows that was most of a run's first 14 s). The unique
    constraint still makes each row once: a row another run made meanwhile is skipped by ignore_conflicts
    and read back like any other existing row.
    """
    judge_ids = {judge.pk for judge, *_ in wanted}
    cell_ids = {cell.pk for _judge, cell, *_ in wanted}
    existing_rows = JudgeCall.objects.filter(judge_id__in=judge_ids, cell_id__in=cell_ids)

    def read() -> dict[tuple, JudgeCall]:
        return {(c.judge_id, c.cell_id, c.order, c.sample): c for c in existing_rows.all()}  # a fresh query

    found = read()
    missing = []
    for judge, cell, order, sample in wanted:
        if (judge.pk, cell.pk, order, sample) not in found:
            first, second = (cell.answer_a, cell.answer_b) if order == "ab" else (cell.answer_b, cell.answer_a)
            missing.append(
                JudgeCall(
                    judge=judge,
                    cell=cell,
                    order=order,
                    sample=sample,
                    run=run,
                    first_answer=first,
                    second_answer=second,
                )
            )
    if missing:
        JudgeCall.objects.bulk_create(missing, batch_size=500, ignore_conflicts=True)
        found = read()
    return found


def sweep_judge_calls(*, older_than_minutes: float | None = None) -> int:
    """Queue again rows whose worker died or whose message was lost; fail rows at the attempts cap."""
    conf = collect_settings()
    minutes = conf["sweep_minutes"] if older_than_minutes is None else older_than_minutes
    now = timezone.now()
    overdue = now - timedelta(seconds=conf["sweep_grace_seconds"])
    stale = JudgeCall.objects.filter(
        Q(status=Status.PENDING, queued_at__lt=now - timedelta(minutes=minutes))
        | Q(status=Status.PENDING, not_before__lt=overdue)
        | Q(status=Status.RUNNING, lease_expires_at__lt=now)
    )
    for call in stale.filter(attempts__gte=conf["max_attempts"]):
        give_up(call)
    requeued = []
    with transaction.atomic():
        for pk, queued_at in stale.filter(attempts__lt=conf["max_attempts"]).values_list("pk", "queued_at"):
            if JudgeCall.objects.filter(pk=pk, queued_at=queued_at).update(queued_at=now, not_before=None):
                requeued.append(pk)
        queue(requeued)
    if requeued:
        log.info("llm_judging sweep re-queued %d judge calls", len(requeued))
    return len(requeued)
