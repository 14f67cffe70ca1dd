"""Refitting studies: one AnalysisRun snapshot per refit, nightly, on demand or by command."""

from __future__ import annotations

import logging
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import cast

import kombu.exceptions
import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import timezone

from moraljudge.celery import app
from surveys.models import Study

from ..models import AnalysisRun
from ..results import QuestionResult, RunResults, SystemAtFit, run_fields
from .fitting import DEFAULT_PARAMETERS, fit_question, halo_correlations
from .participant_draws import SplitDraws, resample_participants
from .reading import QuestionData, StudyData, read_study_data
from .records import json_safe

log = logging.getLogger("analysis.services")


def git_revision() -> str:
    if settings.GIT_REVISION:
        return settings.GIT_REVISION[:64]
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


def refit_study(*, study: Study, trigger: str, parameters: dict | None = None, requested_by=None) -> AnalysisRun:
    """Fit every question of a study on its current valid judgments and store the snapshot.

    A run that cannot be fitted (no reference system, broken data) is stored as FAILED with the
    reason, so the dashboard can say why; the caller gets the run either way.
    """
    parameters = DEFAULT_PARAMETERS | {"bias_reduced": study.bias_reduced} | (parameters or {})
    fail_interrupted_runs(study=study)
    run = AnalysisRun.objects.create(
        study=study,
        trigger=trigger,
        requested_by=requested_by,
        parameters=parameters,
        git_revision=git_revision(),
    )
    phases: dict[str, float] = {}  # seconds per phase, for the log and `manage.py refit`
    try:
        with _timed(phases, "reading"):
            data = read_study_data(study=study)
        parameters["reference"] = data.systems[data.reference]["key"]
        questions = _fit_questions(data, parameters=parameters, phases=phases)
    except (ValidationError, ValueError, np.linalg.LinAlgError) as exc:
        message = "; ".join(exc.messages) if isinstance(exc, ValidationError) else str(exc)
        log.warning("refit of study %s failed: %s", study.slug, message)
        return _mark_failed(run, message)
    except Exception as exc:  # an unexpected bug: record it on the run, then let the worker see it
        _mark_failed(run, f"{type(exc).__name__}: {exc}")
        raise
    with _timed(phases, "storing"):
        _mark_done(run, data=data, parameters=parameters, questions=questions)
    run.phase_seconds = phases
    log.info("refit study=%s run=%s judgments=%s phases=%s", study.slug, run.pk, run.n_judgments, phases)
    return run


@contextmanager
def _timed(phases: dict[str, float], name: str):
    started = time.perf_counter()
    try:
        yield
    finally:
        phases[name] = phases.get(name, 0.0) + time.perf_counter() - started


def _fit_questions(data: StudyData, *, parameters: dict, phases: dict[str, float]) -> list[QuestionResult]:
    """Every question's fit, in the study's order."""
    # The participants' bootstrap weights are drawn once, for every question (a joint bootstrap).
    with _timed(phases, "bootstrap weights"):
        participant_replicates = resample_participants(
            data.questions, n_items=len(data.systems), reference=data.reference, parameters=parameters
        )
    questions, split_draws = [], SplitDraws()
    pending = cast("list[QuestionData | None]", data.questions)  # the same list, emptied as it is fitted
    for position in range(len(pending)):
        # Taken out of the study's data as it is fitted, so its arrays are freed once fitted.
        question, pending[position] = pending[position], None
        assert question is not None
        with _timed(phases, "fitting"):
            questions.append(
                fit_question(
                    question,
                    systems=data.systems,
                    reference=data.reference,
                    parameters=parameters,
                    position=position,
                    vignette_keys=data.vignette_keys,
                    participant_replicates=participant_replicates[position],
                    split_draws=split_draws,
                    vignette_sets=data.vignette_sets,
                )
            )
        del question
    return questions


def _mark_done(run: AnalysisRun, *, data: StudyData, parameters: dict, questions: list[QuestionResult]) -> None:
    """Store the fitted questions on the run, DONE, and read it back."""
    fitted = RunResults(
        systems=[SystemAtFit(**system) for system in data.systems],
        questions=questions,
        halo=halo_correlations(questions),
    )
    AnalysisRun.objects.filter(pk=run.pk).update(
        status=AnalysisRun.Status.DONE,
        finished_at=timezone.now(),
        n_judgments=data.judgment_count,
        n_participants=data.participant_count,
        data_hash=data.data_hash,
        parameters=json_safe(parameters),
        **run_fields(fitted),
    )
    run.refresh_from_db()


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


class RefitOutcome(StrEnum):
    QUEUED = "queued"  # a worker will refit
    RAN = "ran"  # no broker configured: refitted in the request
    UNREACHABLE = "unreachable"  # a broker is configured but does not answer: nothing was queued


@dataclass(frozen=True)
class RefitRequest:
    outcome: RefitOutcome
    message: str  # what to tell the researcher
    run: AnalysisRun | None = None  # the stored run when it ran in the request


def request_refit(*, study: Study, requested_by=None) -> RefitRequest:
    """A researcher's "Refit now" (dashboard and API): queue a refit, or say why it was not queued.

    Sent at once rather than on commit, so the researcher learns whether the broker took it: the task
    reads only committed judgments, nothing this request writes. A broker that cannot be reached
    leaves nothing behind (no run row, no message) and is a message, never a 500.
    """
    if app.conf.task_always_eager:  # no broker configured (the quickstart): refit in the request
        run = refit_study(study=study, trigger=AnalysisRun.Trigger.ON_DEMAND, requested_by=requested_by)
        return RefitRequest(
            RefitOutcome.RAN,
            f"No task queue is configured (REDIS_URL and CELERY_BROKER_URL are empty), so the refit of '{study.name}' ran now: "
            f"run {run.pk}, {run.get_status_display().lower()}.",
            run,
        )
    user_id = requested_by.pk if requested_by is not None else None
    try:
        _send_refit(study=study, user_id=user_id)
    except (kombu.exceptions.OperationalError, OSError) as exc:
        log.warning("refit of study %s not queued: broker unreachable (%s)", study.slug, exc)
        return RefitRequest(
            RefitOutcome.UNREACHABLE,
            f"The task queue cannot be reached, so no refit of '{study.name}' was queued and nothing changed. "
            f"Try again in a minute, or run `manage.py refit {study.slug}` on the server.",
        )
    return RefitRequest(
        RefitOutcome.QUEUED, f"A refit of '{study.name}' was queued; the page shows it once it has finished."
    )


def _send_refit(*, study: Study, user_id: int | None) -> None:
    """Send the refit task now, on a fresh broker connection (the broker may be back); raises when it cannot.

    The one import inside a function in analysis, and the only one allowed: tasks.py calls these services,
    so the services reach their own task lazily (docs/architecture.md).
    """
    from .. import tasks

    with app.connection_for_write() as connection:
        tasks.refit_study.apply_async(  # type: ignore[call-arg]  # celery takes connection= among its options; the stubs omit it
            args=(study.pk, AnalysisRun.Trigger.ON_DEMAND, user_id), connection=connection
        )
