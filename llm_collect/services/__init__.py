"""Collecting answers from LLMs, as plain functions: runs (start, retry, sweep) and the collection step."""

from .calling import give_up, record_retryable
from .collecting import (
    claim,
    collect,
    record_reply,
    select_first_valid,
)
from .config import (
    DEFAULTS,
    PRICES_PER_MILLION,
    TryAgain,
    collect_settings,
    estimate_cost,
    retry_delay,
    target_for,
)
from .runs import missing_keys, queue, retry_generations, start_collection, sweep_generations

__all__ = [
    "DEFAULTS",
    "PRICES_PER_MILLION",
    "TryAgain",
    "claim",
    "collect",
    "collect_settings",
    "estimate_cost",
    "give_up",
    "missing_keys",
    "queue",
    "record_reply",
    "record_retryable",
    "retry_delay",
    "retry_generations",
    "select_first_valid",
    "start_collection",
    "sweep_generations",
    "target_for",
]
