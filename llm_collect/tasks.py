"""Thin Celery tasks: call a service, set the retry policy."""

import time

from celery import shared_task
from django.db import InterfaceError, OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError

from . import services

MAX_RETRIES = 200  # most retries are only waits for a rate slot; paid calls are capped by Generation.attempts
# The database or the rate limiter's Redis out of reach for a moment: the task asks again shortly rather than
# failing, which would leave a queued sample waiting for the sweep's 15-minute rule.
OUTAGES = (OperationalError, InterfaceError, RedisConnectionError)
OUTAGE_RETRY_SECONDS = 5


# At-least-once: the message is acknowledged only when the task has finished, and given back to the broker if
# the worker process dies under it, so another worker runs it (the row's claim keeps the call paid once).
@shared_task(bind=True, max_retries=MAX_RETRIES, acks_late=True, reject_on_worker_lost=True)
def collect(self, generation_id: int) -> str:
    for retries in range(MAX_RETRIES + 1):
        try:
            return services.collect(generation_id=generation_id, retries=self.request.retries + retries)
        except services.TryAgain as exc:
            if not self.request.is_eager:
                countdown = min(exc.delay, services.collect_settings()["max_countdown_seconds"])
                raise self.retry(exc=exc, countdown=countdown) from exc
            # No broker (the laptop quickstart runs tasks in-process): wait here instead of re-queueing.
            time.sleep(min(exc.delay, 60))
        except OUTAGES as exc:
            if self.request.is_eager:
                raise
            raise self.retry(exc=exc, countdown=OUTAGE_RETRY_SECONDS) from exc
    return "gave up waiting"


@shared_task
def sweep() -> int:
    return services.sweep_generations()
