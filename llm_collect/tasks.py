"""Thin Celery tasks: call a service, set the retry policy."""

from celery import shared_task

from . import services


@shared_task(bind=True, max_retries=200, acks_late=True)
def collect(self, generation_id: int) -> str:
    # Many retries are only waits for a rate slot; the paid calls are capped by the row's attempts counter.
    try:
        return services.collect(generation_id=generation_id)
    except services.TryAgain as exc:
        delay = services.retry_delay(retries=self.request.retries, retry_after=exc.retry_after, backoff=exc.backoff)
        raise self.retry(exc=exc, countdown=delay) from exc


@shared_task
def sweep() -> int:
    return services.sweep_generations()
