"""Refitting studies: valid judgments in, an AnalysisRun snapshot out.

Reads the survey's valid judgments, turns them into arrays per question and calls the pure maths
in `analysis.bradley_terry`. Writes only AnalysisRun rows.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import statistics
import subprocess
import warnings
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Sum
from django.utils import timezone

from surveys.models import Answer, Cell, Judgment, Participant, Study

from . import bradley_terry as bt
from . import power
from .models import AnalysisRun

log = logging.getLogger(__name__)

DEFAULT_PARAMETERS = {
    "order_effect": False,  # the method's estimates are plain BT; the order effect is reported beside them
    "bootstrap": 1000,
    "seed": 20240601,
    "split_halves": 100,
    "style_per_words": 100,  # the style covariate: word-count difference (winner - loser) per 100 words
}


# ---------------------------------------------------------------- reading judgments


@dataclass
class QuestionData:
    """One question's valid judgments as arrays over the study's systems (item order)."""

    key: str
    text: str
    winners: list[int] = field(default_factory=list)
    losers: list[int] = field(default_factory=list)
    first: list[int] = field(default_factory=list)  # item shown first
    clusters: list[int] = field(default_factory=list)  # participant id
    vignettes: list[int] = field(default_factory=list)
    style: list[float] = field(default_factory=list)  # words(winner) - words(loser)

    def arrays(self):
        return (
            np.asarray(self.winners, np.int64),
            np.asarray(self.losers, np.int64),
            np.asarray(self.first, np.int64),
            np.asarray(self.clusters, np.int64),
            np.asarray(self.vignettes, np.int64),
            np.asarray(self.style, float),
        )


@dataclass
class StudyData:
    systems: list[dict]  # key, label, kind; index = item number
    reference: int
    questions: list[QuestionData]
    vignette_keys: dict[int, str]
    judgment_count: int
    participant_count: int
    data_hash: str


def answer_word_counts(*, study: Study) -> dict[int, int]:
    """Words per answer of the study (action, additional information, features and reasons)."""
    answers = Answer.objects.for_study(study).prefetch_related("features")
    return {answer.pk: answer.word_count() for answer in answers}


def read_study_data(*, study: Study) -> StudyData:
    """The valid judgments of a study, per question, as item indices over its systems."""
    systems = list(study.systems.order_by("position", "id"))
    if study.reference_system_id is None:
        raise ValidationError(f"Study '{study.slug}' has no reference system: set one before fitting.")
    index = {system.pk: k for k, system in enumerate(systems)}
    if study.reference_system_id not in index:
        raise ValidationError(f"Study '{study.slug}': the reference system is not one of its systems.")
    questions = {q.pk: QuestionData(q.key, q.text) for q in study.questions.order_by("position", "id")}
    words = answer_word_counts(study=study)
    rows = (
        Judgment.objects.valid()
        .for_study(study)
        .order_by("id")
        .values_list(
            "id",
            "question_id",
            "winner_id",
            "loser_id",
            "winner__system_id",
            "loser__system_id",
            "winner_position",
            "assignment__participant_id",
            "assignment__vignette_id",
        )
    )
    digest = hashlib.sha256()
    participants: set[int] = set()
    count = 0
    for pk, question_id, winner, loser, winner_system, loser_system, position, participant, vignette in rows:
        digest.update(f"{pk}:{winner}\n".encode())
        data = questions[question_id]
        w, lo = index[winner_system], index[loser_system]
        data.winners.append(w)
        data.losers.append(lo)
        data.first.append(w if position == Judgment.Position.FIRST else lo)
        data.clusters.append(participant)
        data.vignettes.append(vignette)
        data.style.append(words.get(winner, 0) - words.get(loser, 0))
        participants.add(participant)
        count += 1
    return StudyData(
        systems=[{"key": s.key, "label": s.label or s.key, "kind": s.kind} for s in systems],
        reference=index[study.reference_system_id],
        questions=list(questions.values()),
        vignette_keys=dict(study.vignettes.values_list("id", "key")),
        judgment_count=count,
        participant_count=len(participants),
        data_hash=digest.hexdigest(),
    )


# ---------------------------------------------------------------- fitting


def json_safe(value):
    """numpy scalars and arrays to Python, nan and infinities to None (PostgreSQL's JSON has no NaN)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return [json_safe(v) for v in value.tolist()]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


def stars(p: float | None) -> str:
    if p is None or not p == p:
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def fit_question(data: QuestionData, *, systems: list[dict], reference: int, parameters: dict) -> dict:
    """Every estimate and diagnostic of one question, JSON-ready."""
    names = [s["key"] for s in systems]
    n_items = len(names)
    winners, losers, first, clusters, vignettes, style = data.arrays()
    out: dict = {"question": data.key, "text": data.text, "n_judgments": int(len(winners))}
    if len(winners) == 0:
        out |= {"fit": None, "problems": ["No valid judgments on this question yet."]}
        return out
    rng = np.random.default_rng(parameters["seed"])
    use_first = first if parameters["order_effect"] else None
    main = bt.fit(winners, losers, n_items, reference=reference, first=use_first, item_names=names)
    out["fit"] = main.as_dict()
    out["problems"] = list(main.problems)
    out["n_participants"] = int(len(np.unique(clusters)))
    out["holm_p"] = bt.holm(main.p)
    out["stars"] = [stars(p) for p in main.p]
    out["bootstrap"] = _bootstrap(winners, losers, n_items, reference, clusters, use_first, rng, parameters)
    ordered = bt.fit(winners, losers, n_items, reference=reference, first=first, item_names=names)
    out["order_effect"] = ordered.order_effect.as_dict() if ordered.order_effect else None
    out["style_controlled"] = _style_controlled(
        winners, losers, n_items, reference, use_first, style, names, parameters
    )
    out["first_position_rate"] = bt.first_position_rate(first, winners)
    out["separation_reliability"] = _guarded(bt.separation_reliability, main) if main.converged else None
    out["split_half_reliability"] = _split_half(winners, losers, clusters, n_items, reference, rng, parameters)
    out["by_vignette"] = _by_vignette(winners, losers, vignettes, n_items, reference, names)
    return json_safe(out)


def _style_controlled(winners, losers, n_items, reference, first, style, names, parameters) -> dict:
    """The fit with the answers' length difference as a covariate (Chatbot Arena's style control).

    When every judged pair had answers of equal length there is nothing to control for; when each
    system's answers are equally long on every vignette the covariate is confounded with the
    systems and the fit says it is not identifiable.
    """
    if not np.any(style):
        return {"items": None, "covariate_effects": None, "problems": ["No length differences to control for."]}
    styled = bt.fit(
        winners,
        losers,
        n_items,
        reference=reference,
        first=first,
        covariates=(style / parameters["style_per_words"])[:, None],
        item_names=names,
    )
    return styled.as_dict()


def _guarded(function, *args, **kwargs):
    """A diagnostic that cannot be computed on this data is None, never a failed run."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return function(*args, **kwargs)
    except (ValueError, ZeroDivisionError, IndexError, np.linalg.LinAlgError, FloatingPointError):
        return None


def _bootstrap(winners, losers, n_items, reference, clusters, first, rng, parameters) -> dict | None:
    if parameters["bootstrap"] < 1 or len(np.unique(clusters)) < 2:
        return None
    result = _guarded(
        bt.bootstrap,
        winners,
        losers,
        n_items,
        reference=reference,
        clusters=clusters,
        rng=rng,
        first=first,
        n_boot=parameters["bootstrap"],
    )
    if result is None:
        return None
    return {
        "n_boot": parameters["bootstrap"],
        "n_failed": result.n_failed,
        "level": result.level,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "se": result.se,
    }


def _split_half(winners, losers, clusters, n_items, reference, rng, parameters) -> float | None:
    if len(np.unique(clusters)) < 4 or parameters["split_halves"] < 1:
        return None
    return _guarded(
        bt.split_half_reliability,
        winners,
        losers,
        clusters,
        n_items,
        reference,
        rng,
        n_splits=parameters["split_halves"],
    )


def _by_vignette(winners, losers, vignettes, n_items, reference, names) -> list[dict]:
    """Per vignette: estimates, SEs, wins and losses, and what broke the fit there."""
    breakdown = []
    for vignette in np.unique(vignettes):
        rows = vignettes == vignette
        result = bt.fit(winners[rows], losers[rows], n_items, reference=reference, item_names=names)
        breakdown.append(
            {
                "vignette_id": int(vignette),
                "n_judgments": int(rows.sum()),
                "estimates": result.estimates,
                "se": result.se,
                "wins": result.wins,
                "losses": result.losses,
                "problems": list(result.problems),
            }
        )
    return breakdown


def halo_correlations(results: dict) -> dict:
    """Pearson correlation of the system estimates between every two questions (finite systems only)."""
    keys = [key for key, result in results.items() if result.get("fit")]
    matrix = []
    for first in keys:
        row = []
        for second in keys:
            x = np.array([i["estimate"] for i in results[first]["fit"]["items"]], dtype=float)
            y = np.array([i["estimate"] for i in results[second]["fit"]["items"]], dtype=float)
            both = np.isfinite(x) & np.isfinite(y)
            enough = both.sum() >= 3 and np.std(x[both]) > 0 and np.std(y[both]) > 0
            row.append(float(np.corrcoef(x[both], y[both])[0, 1]) if enough else None)
        matrix.append(row)
    off_diagonal = [v for i, row in enumerate(matrix) for j, v in enumerate(row) if i < j and v is not None]
    return {
        "questions": keys,
        "matrix": matrix,
        "mean_off_diagonal": statistics.fmean(off_diagonal) if off_diagonal else None,
    }


def git_revision() -> str:
    revision = os.environ.get("GIT_REVISION", "").strip()
    if revision:
        return revision[:64]
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip()[:64] or "unknown"


# ---------------------------------------------------------------- refitting


def refit_study(*, study: Study, trigger: str, parameters: dict | None = None, requested_by=None) -> AnalysisRun:
    """Fit every question of a study on its current valid judgments and store the snapshot.

    A run that cannot be fitted (no reference system, broken data) is stored as FAILED with the
    reason, so the dashboard can say why; the caller gets the run either way.
    """
    parameters = DEFAULT_PARAMETERS | (parameters or {})
    fail_interrupted_runs(study=study)
    run = AnalysisRun.objects.create(
        study=study,
        trigger=trigger,
        requested_by=requested_by,
        parameters=parameters,
        git_revision=git_revision(),
    )
    try:
        data = read_study_data(study=study)
        parameters["reference"] = data.systems[data.reference]["key"]
        results = {
            question.key: fit_question(question, systems=data.systems, reference=data.reference, parameters=parameters)
            for question in data.questions
        }
    except (ValidationError, ValueError, np.linalg.LinAlgError) as exc:
        message = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
        log.warning("refit of study %s failed: %s", study.slug, message)
        return _mark_failed(run, message)
    except Exception as exc:  # an unexpected bug: record it on the run, then let the worker see it
        _mark_failed(run, f"{type(exc).__name__}: {exc}")
        raise
    for result in results.values():
        for entry in result.get("by_vignette", []):
            entry["vignette"] = data.vignette_keys.get(entry["vignette_id"], str(entry["vignette_id"]))
    AnalysisRun.objects.filter(pk=run.pk).update(
        status=AnalysisRun.Status.DONE,
        finished_at=timezone.now(),
        n_judgments=data.judgment_count,
        n_participants=data.participant_count,
        data_hash=data.data_hash,
        parameters=json_safe(parameters),
        systems=data.systems,
        results=results,
        halo=json_safe(halo_correlations(results)),
    )
    run.refresh_from_db()
    log.info("refit study=%s run=%s judgments=%s", study.slug, run.pk, run.n_judgments)
    return run


def fail_interrupted_runs(*, study: Study) -> int:
    """Runs still RUNNING past the task time limit were killed (a worker lost, a deploy): say so."""
    cutoff = timezone.now() - timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    return AnalysisRun.objects.filter(study=study, status=AnalysisRun.Status.RUNNING, created_at__lt=cutoff).update(
        status=AnalysisRun.Status.FAILED,
        error="Interrupted: the refit did not finish within the task time limit.",
        finished_at=timezone.now(),
    )


def _mark_failed(run: AnalysisRun, message: str) -> AnalysisRun:
    AnalysisRun.objects.filter(pk=run.pk).update(
        status=AnalysisRun.Status.FAILED, error=message, finished_at=timezone.now()
    )
    run.refresh_from_db()
    return run


def refit_live_studies(*, trigger: str = AnalysisRun.Trigger.NIGHTLY) -> list[AnalysisRun]:
    return [refit_study(study=study, trigger=trigger) for study in Study.objects.filter(status=Study.Status.LIVE)]


def queue_refit(*, study: Study, requested_by=None) -> None:
    """Ask a worker to refit the study once the current transaction commits."""
    from . import tasks  # tasks import this module

    user_id = requested_by.pk if requested_by is not None else None
    transaction.on_commit(partial(tasks.refit_study.delay, study.pk, AnalysisRun.Trigger.ON_DEMAND, user_id))


# ---------------------------------------------------------------- progress


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
        "median_minutes_start_to_finish": _median_minutes_start_to_finish(people),
    }


def _median_minutes_start_to_finish(people) -> float | None:
    spans = [
        (finished - started).total_seconds() / 60
        for started, finished in people.filter(
            status=Participant.Status.COMPLETED, finished_at__isnull=False
        ).values_list("started_at", "finished_at")
    ]
    return round(statistics.median(spans), 1) if spans else None


# ---------------------------------------------------------------- power


def plan_power(
    *, target_power: float | None = None, seed: int | None = None, **design
) -> tuple[power.PowerResult, int | None]:
    """Simulated power of a design and, when a target is given, the repetitions that reach it."""
    result = power.power_analysis(seed=seed, **design)
    needed = None
    if target_power is not None:
        needed = result.repetitions_needed_for(target_power)
    return result, needed
