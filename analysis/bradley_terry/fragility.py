"""How many judgments (judges, vignettes) a significant result hinges on (docs/statistics.md, "Fragility").

Broderick, Giordano and Meager's approximate maximum influence perturbation, as Huang et al. (2025) applied it
to Chatbot Arena: dropping unit u (a judgment, or all of a judge's or a vignette's judgments) moves the estimate
by about -(I^-1 S_u)_k, I the information and S_u the unit's summed score (one Newton step back from the fit).
Units are ordered by how far their removal would pull the estimate towards zero, and the approximation says how
many of the first must go before estimate / SE falls inside the critical value (the SE held fixed). That count
is then checked by refitting without them, with the same test as the result: when the refit still holds, more are
dropped (the count grows by half) until it does not; then a bisection between the last count that held and the
first that did not finds the smallest prefix of that order whose removal, confirmed by refit, makes the result
not significant or flips its sign. A result is reported fragile only with a set so confirmed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .labels import codes

MAX_REFITS = 24


@dataclass(frozen=True)
class Fragility:
    """The smallest confirmed set of units whose removal undoes a result, or `count` None when none was found."""

    unit: str  # "judgment", "judge" or "vignette"
    count: int | None  # units to drop
    of: int  # units in the data
    judgments: int | None  # the judgments those units hold
    of_judgments: int
    removed: list[int]  # the units (their labels' 0-based codes, or row indices for judgments), in drop order
    approximate: int | None  # what the influence approximation alone said
    refits: int

    @property
    def share(self) -> float | None:
        return None if self.count is None or not self.of else self.count / self.of

    def as_dict(self) -> dict:
        return {
            "unit": self.unit,
            "count": self.count,
            "of": self.of,
            "judgments": self.judgments,
            "of_judgments": self.of_judgments,
            "approximate": self.approximate,
            "refits": self.refits,
            "confirmed": self.count is not None,
        }

    def in_words(self) -> str:
        """ "holds unless 14 of 2,016 judgments (0.7%) are dropped" """
        plural = {"judgment": "judgments", "judge": "judges", "vignette": "vignettes"}[self.unit]
        if self.count is None:
            return f"holds when any few {plural} are dropped (none of the sets tried undid it)"
        return f"holds unless {self.count:,} of {self.of:,} {plural} ({100 * self.count / self.of:.1f}%) are dropped"


def drop_effects(scores, bread: np.ndarray, coefficient: int) -> np.ndarray:
    """Per row, the approximate change of coefficient `coefficient` when the row is dropped: -(I^-1 s_row)_k."""
    return -np.asarray(scores @ np.nan_to_num(bread[:, coefficient])).ravel()


def fragility(
    *,
    unit: str,
    effects: np.ndarray,
    units: np.ndarray | None,
    judgments: np.ndarray,
    estimate: float,
    se: float,
    critical: float,
    holds: Callable[[np.ndarray], bool],
    max_refits: int = MAX_REFITS,
) -> Fragility:
    """The smallest confirmed set of units (`units` labels each row; None: each row its own unit) whose removal
    makes `holds(keep)` false; `holds` refits on the rows where `keep` is true and says whether the result is
    still significant with the same sign. `effects` are the rows' `drop_effects`, `judgments` what each row counts."""
    labels = np.arange(len(effects)) if units is None else codes(np.asarray(units))
    n_units = int(labels.max()) + 1 if len(labels) else 0
    per_unit = np.bincount(labels, effects, minlength=n_units)
    judgments_per_unit = np.bincount(labels, np.asarray(judgments, float), minlength=n_units)
    toward_zero = -math.copysign(1.0, estimate) * per_unit  # how far each unit's removal pulls towards zero
    order = np.argsort(-toward_zero, kind="stable")
    helpful = order[toward_zero[order] > 0]
    needed = abs(estimate) - critical * se
    pulled = np.cumsum(toward_zero[helpful])
    reached = np.flatnonzero(pulled >= needed)
    approximate = int(reached[0]) + 1 if len(reached) else None
    refits = 0

    def undone(m: int) -> bool:
        nonlocal refits
        refits += 1
        keep = ~np.isin(labels, order[:m])
        return not holds(keep)

    # Grow from the approximation until a refit confirms, then bisect down to the smallest confirmed prefix.
    low, high, m = 0, None, max(1, approximate or len(helpful) or 1)
    while refits < max_refits and m <= n_units:
        if undone(m):
            high = m
            break
        low = m
        if m == n_units:
            break
        m = min(n_units, max(m + 1, math.ceil(m * 1.5)))
    while high is not None and high - low > 1 and refits < max_refits:
        middle = (low + high) // 2
        if undone(middle):
            high = middle
        else:
            low = middle
    total = round(float(np.sum(judgments)))
    if high is None:
        return Fragility(unit, None, n_units, None, total, [], approximate, refits)
    removed = [int(u) for u in order[:high]]
    return Fragility(
        unit, high, n_units, round(float(judgments_per_unit[removed].sum())), total, removed, approximate, refits
    )
