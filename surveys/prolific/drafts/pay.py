"""The money of a Prolific study: rewards in pence or cents, the hourly rate they pay, places with margin."""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, Decimal

from django.conf import settings

CURRENCY_SYMBOLS = {"GBP": "£", "USD": "$"}


def money(minor: int, currency: str) -> str:
    return f"{CURRENCY_SYMBOLS.get(currency, currency + ' ')}{Decimal(minor) / 100:.2f}"


def with_margin(judges: int, margin_percent: int) -> int:
    return math.ceil(judges * (100 + margin_percent) / 100)


def reward_for(*, hourly_rate: Decimal, minutes: int) -> int:
    """Pence or cents for `minutes` at `hourly_rate`, rounded up: never below the rate the researcher set."""
    return int((hourly_rate * 100 * minutes / 60).to_integral_value(rounding=ROUND_CEILING))


def hourly_rate_of(*, reward: int, minutes: int) -> Decimal:
    return (Decimal(reward) * 60 / minutes / 100).quantize(Decimal("0.01"))


def rate_warnings(*, currency: str, hourly_rate: Decimal) -> list[str]:
    rates = settings.PROLIFIC_HOURLY_RATES.get(currency)
    if rates is None:
        return [f"no Prolific minimum is known for {currency} (settings.PROLIFIC_HOURLY_RATES)"]
    symbol = CURRENCY_SYMBOLS.get(currency, currency + " ")
    if hourly_rate < rates["minimum"]:
        return [
            f"the reward pays {symbol}{hourly_rate} per hour, below Prolific's minimum of "
            f"{symbol}{rates['minimum']}: Prolific will refuse the study"
        ]
    if hourly_rate < rates["recommended"]:
        return [
            f"the reward pays {symbol}{hourly_rate} per hour, below Prolific's recommended {symbol}{rates['recommended']}"
        ]
    return []
