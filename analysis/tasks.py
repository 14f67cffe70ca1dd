"""Thin Celery tasks: refit one study (on demand) or every live study (nightly, by beat)."""

from celery import shared_task
from django.contrib.auth import get_user_model

from surveys.models import Study

from . import services
from .models import AnalysisRun


@shared_task
def refit_study(study_id: int, trigger: str = AnalysisRun.Trigger.ON_DEMAND, requested_by_id: int | None = None):
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return None  # deleted since it was queued
    user = get_user_model().objects.filter(pk=requested_by_id).first() if requested_by_id else None
    return services.refit_study(study=study, trigger=trigger, requested_by=user).pk


@shared_task
def refit_live_studies() -> list[int]:
    return [run.pk for run in services.refit_live_studies(trigger=AnalysisRun.Trigger.NIGHTLY)]


@shared_task
def simulate_power(run_id: int) -> None:
    """The reported test's power at a planned design and its levers (resumes from the run's saved tallies)."""
    services.simulate_power_run(run_id=run_id)
