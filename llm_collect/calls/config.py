"""The call mechanism's settings (settings.LLM_CALLS over DEFAULTS), the price table, retry delays, and the
bridge from a configured model (a System or a JudgeModel) to a client Target."""

from __future__ import annotations

import math
import random
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.utils import timezone

from .. import client

DEFAULTS = {
    # A claimed row is someone else's for this long; the worker renews it every third of it while it lives, so
    # a killed worker's row is free again within this many seconds (and the sweep queues it again).
    "lease_seconds": 30,
    "max_attempts": 5,  # provider calls per row, whatever went wrong
    "max_invalid_attempts": 3,  # of which at most this many may return unusable output
    "max_wait_seconds": 15,  # a worker sleeps this long at most for a rate or concurrency slot
    "sweep_minutes": 15,  # pending rows whose message waited in the broker this long are queued again
    # A pending row whose message was due this long ago lost it (a dead worker, or a broker that refused it):
    # the sweep sends another.
    "sweep_grace_seconds": 30,
    # Retries wait at most this long as a countdown (Celery ETA); it must stay under the broker's visibility
    # timeout (CELERY_BROKER_TRANSPORT_OPTIONS), or Redis would hand a waiting message to a second worker.
    "max_countdown_seconds": 300,
    # The longest wait a provider may ask for (Retry-After, Gemini's retryDelay, a rate-limit reset); longer
    # ones, "inf" included, are cut to this.
    "max_provider_wait_seconds": 600,
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
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "o1-mini": (1.10, 4.40),
    "o1": (15.00, 60.00),
    "o3-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-opus-4": (15.00, 75.00),
    "claude-haiku-4": (1.00, 5.00),
    "gemini-1.5-flash": (0.075, 0.30),
    "gemini-1.5-pro": (1.25, 5.00),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-pro": (1.25, 10.00),
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


def call_settings() -> dict:
    """settings.LLM_CALLS over DEFAULTS: one set for answer collection and LLM judging alike."""
    return {**DEFAULTS, **getattr(settings, "LLM_CALLS", {})}


def bounded_wait(seconds: float | None) -> float | None:
    """A wait a provider asked for, cut to max_provider_wait_seconds (an "inf" or a NaN is the bound itself)."""
    if seconds is None:
        return None
    bound = float(call_settings()["max_provider_wait_seconds"])
    if math.isnan(seconds):
        return bound
    return min(max(0.0, seconds), bound)


def target_for(configured) -> client.Target:
    """A System or a JudgeModel (the same provider fields) as the client's Target."""
    return client.Target(
        provider=configured.provider,
        model=configured.model,
        base_url=configured.base_url,
        api_key_env=configured.api_key_env,
        parameters=dict(configured.parameters or {}),
        label=configured.key,
    )


def estimate_cost(configured, input_tokens: int, output_tokens: int) -> Decimal:
    prices = (configured.parameters or {}).get("price_per_million")
    if not prices:
        model = configured.model.lower()
        matches = [prefix for prefix in PRICES_PER_MILLION if model.startswith(prefix) or f"/{prefix}" in model]
        prices = PRICES_PER_MILLION[max(matches, key=len)] if matches else (0, 0)
    cost = (input_tokens * float(prices[0]) + output_tokens * float(prices[1])) / 1_000_000
    return Decimal(f"{cost:.6f}")


def retry_delay(*, retries: int, retry_after: float | None, backoff: bool) -> float:
    """Exponential backoff with jitter, never sooner than the provider's wait (bounded)."""
    conf = call_settings()
    if backoff:
        ceiling = min(conf["backoff_cap_seconds"], conf["backoff_base_seconds"] * 2**retries)
        delay = ceiling / 2 + random.uniform(0, ceiling / 2)
    else:
        delay = random.uniform(0, 1)
    retry_after = bounded_wait(retry_after)
    if retry_after is not None:
        delay = max(delay, retry_after + random.uniform(0, 0.5))
    return delay


def sending_notes(configured) -> list[str]:
    """What would be changed from a System's (or JudgeModel's) parameters to fit its model, and why; the same
    notes each call records (surveys/llm_capabilities.py). An unknown provider says so."""
    try:
        fmt = client.wire(configured.provider)
    except client.Permanent as exc:
        return [str(exc)]
    prompt = client.Prompt(system="", user="")
    notes = list(fmt.request(target_for(configured), prompt).notes)
    schema = client.OutputSchema(name="judgment", schema={"type": "object", "properties": {}})
    judging = fmt.request(target_for(configured), client.Prompt(system="", user="", schema=schema)).notes
    return notes + [f"When judging: {note}" for note in judging if note not in notes]
