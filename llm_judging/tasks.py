"""Thin Celery tasks: call a service, set the retry policy (answer collection's, see llm_collect/tasks.py)."""

import time

from celery import shared_task
from django.db import InterfaceError, OperationalError

from llm_collect.services.config import TryAgain, collect_settings

from .services import calling, runs

MAX_RETRIES = 200  # most retries only wait for a rate slot; paid calls are capped by JudgeCall.attempts


# The database out of reach for a moment (a restart, "too many clients"): the message is retried instead of
# failing, since a pending row whose message is gone waits for the sweep's sweep_minutes. Safe: judge_item is
# idempotent, and a row claimed before the error stays held under its lease until it runs out.
@shared_task(
    bind=True,
    max_retries=MAX_RETRIES,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    retry_backoff_max=60,
)
def judge(self, call_id: int) -> str:
    for retries in range(MAX_RETRIES + 1):
        try:
            return calling.judge_item(call_id=call_id, retries=self.request.retries + retries)
        except TryAgain as exc:
            if not self.request.is_eager:
                countdown = min(exc.delay, collect_settings()["max_countdown_seconds"])
                raise self.retry(exc=exc, countdown=countdown) from exc
            time.sleep(min(exc.delay, 60))  # no broker (laptop quickstart): wait here instead of re-queueing
    return "gave up waiting"


@shared_task
def sweep() -> int:
    return runs.sweep_judge_calls()
