"""Refitting studies: one AnalysisRun snapshot per refit, nightly, on demand or by command."""

from __future__ import annotations

import logging
import os
import subprocess
from datetime import timedelta
from functools import partial

import numpy as np
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from surveys.models import Study

from ..models import AnalysisRun
from .fitting import DEFAULT_PARAMETERS, fit_question, halo_correlations, json_safe
from .reading import read_study_data

log = logging.getLogger("analysis.services")


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
            | {"position": position}
            for position, question in enumerate(data.questions)
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
    from .. import tasks  # tasks import this module

    user_id = requested_by.pk if requested_by is not None else None
    transaction.on_commit(partial(tasks.refit_study.delay, study.pk, AnalysisRun.Trigger.ON_DEMAND, user_id))
