"""Collecting answers from LLMs, as plain functions: runs (start, retry, sweep) and the collection step.

The call mechanism itself (claim, lease, retries, sweep, queueing) is llm_collect/calls/, shared with
llm_judging; see docs/architecture.md.
"""

from ..calls import TryAgain, call_settings, claim, estimate_cost, missing_keys, target_for
from .collecting import collect, record_reply, select_first_valid
from .runs import queue, retry_generations, start_collection, sweep_generations

__all__ = [
    "TryAgain",
    "call_settings",
    "claim",
    "collect",
    "estimate_cost",
    "missing_keys",
    "queue",
    "record_reply",
    "retry_generations",
    "select_first_valid",
    "start_collection",
    "sweep_generations",
    "target_for",
]
