"""Thin Celery tasks: call a service, set the retry policy."""

import time

from celery import shared_task

from . import services

MAX_RETRIES = 200  # most retries are only waits for a rate slot; paid calls are capped by Generation.attempts


@shared_task(bind=True, max_retries=MAX_RETRIES, acks_late=True)
def collect(self, generation_id: int) -> str:
    for retries in range(MAX_RETRIES + 1):
        try:
            return services.collect(generation_id=generation_id)
        except services.TryAgain as exc:
            delay = services.retry_delay(
                retries=self.request.retries + retries, retry_after=exc.retry_after, backoff=exc.backoff
            )
            if not self.request.is_eager:
                raise self.retry(exc=exc, countdown=delay) from exc
            # No broker (the laptop quickstart runs tasks in-process): wait here instead of re-queueing.
            time.sleep(min(delay, 60))
    return "gave up waiting"


@shared_task
def sweep() -> int:
    return services.sweep_generations()
