"""What the dashboard shows before any fit: a study's progress; and power planning before launch."""

from __future__ import annotations

import statistics

from django.db.models import Count, Sum

from surveys.models import Cell, Participant, Study

from .. import power


def study_progress(*, study: Study) -> dict:
    """Cells filled against target, participants by status, exclusions by reason, median minutes.

    `median_minutes` is the judging time (the sum of the judging pages' seconds) of completed
    participants; `median_minutes_start_to_finish` is their time from arrival to completion.
    """
    cells = Cell.objects.filter(study=study).aggregate(
        cells=Count("id"), target=Sum("target"), completed=Sum("completed"), reserved=Sum("reserved")
    )
    target, completed = cells["target"] or 0, cells["completed"] or 0
    people = Participant.objects.filter(study=study, is_preview=False)
    by_status = dict(people.values_list("status").annotate(n=Count("id")).order_by("status"))
    exclusions = dict(people.exclude(exclusion="").values_list("exclusion").annotate(n=Count("id")).order_by())
    labels = dict(Participant.Status.choices)
    reasons = dict(Participant.Exclusion.choices)
    minutes = [
        seconds / 60
        for seconds in people.filter(status=Participant.Status.COMPLETED, seconds_total__gt=0).values_list(
            "seconds_total", flat=True
        )
    ]
    return {
        "cells": cells["cells"],
        "target": target,
        "completed": completed,
        "reserved": cells["reserved"] or 0,
        "percent_complete": round(100 * completed / target, 1) if target else 0.0,
        "participants": sum(by_status.values()),
        "valid_participants": people.filter(status=Participant.Status.COMPLETED, exclusion="").count(),
        "by_status": [{"status": s, "label": labels.get(s, s), "count": n} for s, n in sorted(by_status.items())],
        "exclusions": [{"reason": r, "label": reasons.get(r, r), "count": n} for r, n in sorted(exclusions.items())],
        "median_minutes": round(statistics.median(minutes), 1) if minutes else None,
        "median_minutes_start_to_finish": (to_finish := _median_minutes_start_to_finish(people)),
        # A page answered without being loaded (simulate_judges posts directly) is timed from its reservation at
        # arrival, not from being shown: summed, such pages can exceed the whole visit, which the dashboard says.
        "judging_exceeds_visit": bool(minutes and to_finish is not None and statistics.median(minutes) > to_finish),
    }


def _median_minutes_start_to_finish(people) -> float | None:
    spans = [
        (finished - started).total_seconds() / 60
        for started, finished in people.filter(
            status=Participant.Status.COMPLETED, finished_at__isnull=False
        ).values_list("started_at", "finished_at")
    ]
    return round(statistics.median(spans), 1) if spans else None


def plan_power(
    *, target_power: float | None = None, seed: int | None = None, **design
) -> tuple[power.PowerResult, int | None]:
    """Simulated power of a design and, when a target is given, the repetitions that reach it."""
    result = power.power_analysis(seed=seed, **design)
    needed = None
    if target_power is not None:
        needed = result.repetitions_needed_for(target_power)
    return result, needed
