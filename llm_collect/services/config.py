"""Collection settings, the price table, retry delays and the bridge from a System to a client Target."""

from __future__ import annotations

import random
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.utils import timezone

from surveys.models import System

from .. import client

DEFAULTS = {
    # A claimed row is someone else's for this long; the worker renews it every third of it while it lives, so
    # a killed worker's row is free again within this many seconds (and the sweep queues it again).
    "lease_seconds": 30,
    "max_attempts": 5,  # provider calls per Generation, whatever went wrong
    "max_invalid_attempts": 3,  # of which at most this many may return unusable output
    "max_wait_seconds": 15,  # a worker sleeps this long at most for a rate or concurrency slot
    "sweep_minutes": 15,  # pending rows whose message waited in the broker this long are queued again
    # A pending row whose retry was due this long ago lost its message with a dead worker: queued again.
    "sweep_grace_seconds": 30,
    # Retries wait at most this long as a countdown (Celery ETA); it must stay under the broker's visibility
    # timeout (CELERY_BROKER_TRANSPORT_OPTIONS), or Redis would hand a waiting message to a second worker.
    "max_countdown_seconds": 300,
    "backoff_base_seconds": 2,
    "backoff_cap_seconds": 300,
    "queue": None,  # a Celery queue of their own for these slow, I/O-bound tasks (None: the default queue)
}

# Estimated USD per million tokens (input, output), list prices at the time of writing. Estimates only:
# providers change prices and bill cached or reasoning tokens differently. Longest matching prefix wins;
# a System's parameters may set "price_per_million": [input, output].
PRICES_PER_MILLION = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "o1-mini": (1.10, 4.40),
    "o1": (15.00, 60.00),
    "o3-mini": (1.10, 4.40),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "gemini-1.5-flash": (0.075, 0.30),
    "gemini-1.5-pro": (1.25, 5.00),
    "deepseek-chat": (0.27, 1.10),
    "llama-3.3-70b": (0.60, 0.60),
    "meta-llama/llama-3.3-70b": (0.60, 0.60),
}


class TryAgain(Exception):
    """Nothing was stored for good: the task should run again after ``delay`` seconds (at ``due``)."""

    def __init__(
        self, message: str, *, retry_after: float | None = None, backoff: bool = True, retries: int = 0
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.backoff = backoff
        self.delay = retry_delay(retries=retries, retry_after=retry_after, backoff=backoff)
        self.due = timezone.now() + timedelta(seconds=self.delay)


def collect_settings() -> dict:
    return {**DEFAULTS, **getattr(settings, "LLM_COLLECT", {})}


def target_for(system: System) -> client.Target:
    return client.Target(
        provider=system.provider,
        model=system.model,
        base_url=system.base_url,
        api_key_env=system.api_key_env,
        parameters=dict(system.parameters or {}),
        label=system.key,
    )


def estimate_cost(system: System, input_tokens: int, output_tokens: int) -> Decimal:
    prices = (system.parameters or {}).get("price_per_million")
    if not prices:
        model = system.model.lower()
        matches = [prefix for prefix in PRICES_PER_MILLION if model.startswith(prefix) or f"/{prefix}" in model]
        prices = PRICES_PER_MILLION[max(matches, key=len)] if matches else (0, 0)
    cost = (input_tokens * float(prices[0]) + output_tokens * float(prices[1])) / 1_000_000
    return Decimal(f"{cost:.6f}")


def retry_delay(*, retries: int, retry_after: float | None, backoff: bool) -> float:
    """Exponential backoff with jitter, never sooner than the provider's Retry-After."""
    conf = collect_settings()
    if backoff:
        ceiling = min(conf["backoff_cap_seconds"], conf["backoff_base_seconds"] * 2**retries)
        delay = ceiling / 2 + random.uniform(0, ceiling / 2)
    else:
        delay = random.uniform(0, 1)
    if retry_after is not None:
        delay = max(delay, retry_after + random.uniform(0, 0.5))
    return delay
