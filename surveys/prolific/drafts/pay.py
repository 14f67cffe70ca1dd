"""The money of a Prolific study: rewards in pence or cents, the hourly rate they pay, places with margin, and
what paying participants costs with Prolific's fee and VAT (`cost_of`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal

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


@dataclass(frozen=True)
class Cost:
    """What paying participants `paid` (pence or cents) costs with Prolific's fee and the VAT on it: an estimate
    from PROLIFIC_FEE_PERCENT and PROLIFIC_VAT_PERCENT, or Prolific's own figures when it gave them."""

    paid: int
    fees: int
    vat: int
    currency: str
    estimated: bool = True

    @property
    def total(self) -> int:
        return self.paid + self.fees + self.vat

    def __str__(self) -> str:
        fee = f"Prolific's fee {money(self.fees, self.currency)}"
        if self.estimated:
            fee += f" ({settings.PROLIFIC_FEE_PERCENT}%)"
        vat = f" + VAT {money(self.vat, self.currency)}" if self.vat or not self.estimated else ""
        said = f"{money(self.total, self.currency)}: {money(self.paid, self.currency)} to participants + {fee}{vat}"
        return said + (
            " (estimate: fee and VAT rates from the settings)" if self.estimated else " (Prolific's figures)"
        )


def cost_of(paid: int, currency: str) -> Cost:
    """The estimated cost of paying participants `paid` pence or cents, Prolific's fee and VAT included."""
    fees = _percent(paid, settings.PROLIFIC_FEE_PERCENT)
    return Cost(paid=paid, fees=fees, vat=_percent(fees, settings.PROLIFIC_VAT_PERCENT), currency=currency)


def _percent(amount: int, percent: Decimal) -> int:
    return int((Decimal(amount) * Decimal(percent) / 100).to_integral_value(rounding=ROUND_HALF_UP))
