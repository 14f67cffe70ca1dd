"""Celery tasks for Prolific: thin, idempotent; the work is in surveys.prolific.statuses."""

from celery import shared_task

from . import statuses
from .client import Retryable


@shared_task(bind=True, max_retries=5)
def reconcile_live_studies(self) -> list[str]:
    """Every 10 minutes (CELERY_BEAT_SCHEDULE): apply Prolific's submission statuses, for missed webhooks."""
    try:
        return [str(result) for result in statuses.reconcile_live_studies()]
    except Retryable as exc:
        countdown = exc.retry_after if exc.retry_after is not None else 60 * 2**self.request.retries
        raise self.retry(exc=exc, countdown=countdown) from exc
