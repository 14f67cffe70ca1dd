"""Thin Celery tasks: call a service; the retry policy is the call mechanism's (llm_collect/calls/queueing.py
run_step, the same as answer collection's: TryAgain countdowns, and a database or Redis outage waited out)."""

from celery import shared_task

from llm_collect import calls

from .services import calling, runs


@shared_task(**calls.TASK_OPTIONS)
def judge(self, call_id: int) -> str:
    return calls.run_step(self, lambda retries: calling.judge_item(call_id=call_id, retries=retries))


@shared_task
def sweep() -> int:
    return runs.sweep_judge_calls()
