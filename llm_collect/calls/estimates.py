"""What a paid run would cost, for the confirmation pages of both apps, before anything is written or queued.

The calls a run would make follow `runs.plan`: a wanted row that is done (or answered some other way) is not asked;
a failed or invalid one only when asked again; every other one is. Each model's cost per call is the mean of its
earlier calls' estimates (`cost_estimate`, USD from the price table), or unknown when it has none: then its price
per million tokens is said instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Avg, Count, QuerySet

from ..models import LLMCall
from .config import PRICES_PER_MILLION

Status = LLMCall.Status


def calls_to_make(statuses: Mapping, wanted: Iterable, *, retry_failed: bool) -> int:
    """How many of the `wanted` rows a run would queue, given the statuses of the rows already there."""
    asked_again = {Status.FAILED.value, Status.INVALID.value}
    return sum(
        1
        for key in wanted
        if statuses.get(key) != Status.DONE and (retry_failed or statuses.get(key) not in asked_again)
    )


@dataclass(frozen=True)
class CallsEstimate:
    """One model's part of a run: its calls and what they may cost."""

    key: str
    model: str
    calls: int
    per_call: Decimal | None  # USD, the mean of earlier calls; None: no earlier call to go by
    earlier: int
    prices: tuple | None  # USD per million tokens (input, output), from the parameters or the price table

    @property
    def cost(self) -> Decimal | None:
        return None if self.per_call is None else self.per_call * self.calls

    def __str__(self) -> str:
        if self.cost is not None:
            return f"≈ ${self.cost:.2f} ({self.calls} calls × ${self.per_call:.4f}, the mean of {self.earlier} earlier calls)"
        price = (
            f"its price is ${self.prices[0]} / ${self.prices[1]} per million tokens in / out"
            if self.prices
            else "no price is known for this model (set price_per_million in its parameters)"
        )
        return f"{self.calls} calls; no earlier call to estimate from: {price}"


def estimate_calls(configured, *, calls: int, earlier: QuerySet) -> CallsEstimate:
    """`configured` (a System or JudgeModel) making `calls` calls, priced from `earlier` (its finished rows)."""
    seen = earlier.filter(status=Status.DONE, cost_estimate__gt=0).aggregate(n=Count("pk"), mean=Avg("cost_estimate"))
    mean = seen["mean"]
    return CallsEstimate(
        key=configured.key,
        model=configured.model,
        calls=calls,
        per_call=Decimal(str(mean)).quantize(Decimal("0.000001")) if mean is not None else None,
        earlier=seen["n"],
        prices=_prices(configured),
    )


def _prices(configured) -> tuple | None:
    prices = (configured.parameters or {}).get("price_per_million")
    if prices:
        return tuple(prices)
    model = (configured.model or "").lower()
    matches = [prefix for prefix in PRICES_PER_MILLION if model.startswith(prefix) or f"/{prefix}" in model]
    return tuple(PRICES_PER_MILLION[max(matches, key=len)]) if matches else None


def total_said(estimates: list[CallsEstimate]) -> str:
    """The whole run in one line: calls and the cost as far as it is known."""
    calls = sum(e.calls for e in estimates)
    known = [e for e in estimates if e.cost is not None and e.calls]
    unknown = [e.key for e in estimates if e.cost is None and e.calls]
    said = f"{calls} paid calls"
    if known:
        said += f", ≈ ${sum((e.cost for e in known if e.cost is not None), Decimal(0)):.2f}"
        said += " (estimate from earlier calls)"
    if unknown:
        said += f"; cost unknown for {', '.join(unknown)} (no earlier calls)"
    return said
