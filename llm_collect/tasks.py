"""Thin Celery tasks: call a service; the retry policy is the call mechanism's (calls/queueing.py run_step)."""

from celery import shared_task

from . import calls, services


@shared_task(**calls.TASK_OPTIONS)
def collect(self, generation_id: int) -> str:
    return calls.run_step(self, lambda retries: services.collect(generation_id=generation_id, retries=retries))


@shared_task
def sweep() -> int:
    return services.sweep_generations()
