"""Results by vignette set and each system's difference between sets (docs/statistics.md, "Vignette sets").

A study's vignettes may belong to sets (kinds: `published`, `novel`). Every comparison is made on one vignette,
so on one set, and the model with a set interaction,

    logit P(i beats j on a vignette of set s) = lambda_i,s - lambda_j,s   (lambda_reference,s = 0),

is R's `BTm(..., formula = ~ system[ID] + system[ID]:set)`: its likelihood is the product of one fit per set, so
the estimates are the per-set fits'. The difference of system k between sets s and t is lambda_k,t - lambda_k,s.
It is tested with the headline test (headline_test.py: CR2 over vignettes, the judge term as a design effect,
Satterthwaite df) computed over the joint coefficients, every set's abilities and order effect at once, so the
difference gets the Satterthwaite df of that contrast. Vignettes are nested in sets, so the CR2 covariance between
two sets' coefficients is zero, and the judge term scales each coefficient's own variance: what judges who
judged both sets share is left out of the difference's variance, which errs wide (a judge who favours a system in
both sets moves its two estimates together, and their difference less). Each set's own abilities are the headline
test of that set's data. Holm's adjustment runs across the systems of each pair of sets.

`joint_test` is the one place that says how the joint covariance and its degrees of freedom are computed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ..results.shapes import SetDifference
from .diagnostics import holm
from .fitting import fit
from .grouping import order_signs
from .headline_test import (
    INTERVAL_NAME,
    MIN_DF,
    WALD_FLOOR,
    HeadlineTest,
    _cr2_per_vignette,
    _judge_design_effect,
    _satterthwaite,
    headline_test,
    why_no_test,
)
from .labels import codes, count_distinct, distinct_rows
from .results import BTResult

ORDER = -1  # the key of a set's order effect among its coefficients


@dataclass(frozen=True)
class SetEstimates:
    """One set's abilities with the headline interval; arrays follow the items."""

    name: str
    estimates: np.ndarray
    se: np.ndarray
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    df: np.ndarray  # Satterthwaite df per system
    n_comparisons: int
    n_judges: int
    n_vignettes: int
    why_not: str  # "" when the set is tested, else why not (too few vignettes or judges)


@dataclass(frozen=True)
class BySetResult:
    item_names: list[str]
    reference: str
    sets: list[SetEstimates]
    differences: list[SetDifference]
    interval: str
    level: float

    def as_dict(self) -> dict:
        return {
            "reference": self.reference,
            "interval": self.interval,
            "level": self.level,
            "sets": [
                {
                    "set": one.name,
                    "why_not": one.why_not,
                    "n_comparisons": one.n_comparisons,
                    "n_judges": one.n_judges,
                    "n_vignettes": one.n_vignettes,
                    "items": [
                        {"item": name}
                        | {
                            key: _finite(getattr(one, key)[k])
                            for key in ("estimates", "se", "p", "ci_low", "ci_high", "df")
                        }
                        for k, name in enumerate(self.item_names)
                    ],
                }
                for one in self.sets
            ],
            "differences": [dataclasses.asdict(difference) for difference in self.differences],
        }


@dataclass(frozen=True)
class JointTest:
    """The headline covariance of every set's coefficients at once, and the test of a contrast of them."""

    columns: dict[tuple[int, int], int]  # (set, item) -> its coefficient; the reference and empty items have none
    cr2: np.ndarray  # CR2 covariance of the free coefficients over vignettes, before the judge term
    design_effect: np.ndarray  # per free coefficient, the judge term (>= 1)
    cluster_gg: np.ndarray = field(repr=False)  # Satterthwaite pieces per vignette (headline_test's)
    cluster_h: np.ndarray = field(repr=False)

    def contrast(self, weights: dict[tuple[int, int], float]) -> tuple[float | None, float | None]:
        """The SE and Satterthwaite df of sum(weight * lambda_item,set) over (set, item) keys; (None, None) when a
        weighted ability has no coefficient (the reference counts as 0) or the variance is not positive."""
        scaled = np.zeros(len(self.cr2))
        for key, weight in weights.items():
            if key not in self.columns:
                return None, None
            scaled[self.columns[key]] = weight * math.sqrt(self.design_effect[self.columns[key]])
        variance = float(scaled @ self.cr2 @ scaled)
        if not (variance > 0 and math.isfinite(variance)):
            return None, None
        return math.sqrt(variance), _satterthwaite(scaled, self.cluster_gg, self.cluster_h)


def by_set(
    winners: np.ndarray,
    losers: np.ndarray,
    n_items: int,
    *,
    reference: int,
    sets: np.ndarray,
    judges: np.ndarray,
    vignettes: np.ndarray,
    counts: np.ndarray | None = None,
    first: np.ndarray | None = None,
    item_names: list[str] | None = None,
    set_order: Sequence[str] | None = None,
    level: float = 0.95,
) -> BySetResult:
    """Each set's abilities and each system's difference between every later set and the first.

    One label per comparison in `sets`, `judges` and `vignettes`; `set_order` names the sets in the order to
    report them (default: sorted), the first being the baseline of the differences."""
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    names = list(item_names) if item_names is not None else [str(k) for k in range(n_items)]
    labels = np.asarray(sets).astype(str)
    order = list(set_order) if set_order is not None else sorted(set(labels.tolist()))
    judges, vignettes = codes(np.asarray(judges)), codes(np.asarray(vignettes))
    weights = np.ones(len(winners)) if counts is None else np.asarray(counts, float)
    first = None if first is None else np.asarray(first, np.int64)
    masks = [labels == name for name in order]
    set_of = np.full(len(winners), -1)
    for s, mask in enumerate(masks):
        set_of[mask] = s
    if (set_of < 0).any():
        raise ValueError(f"every comparison's set must be one of {', '.join(order)}.")
    fits = [
        fit(winners[m], losers[m], n_items, reference=reference, counts=weights[m],
            first=None if first is None else first[m], item_names=names)
        for m in masks
    ]  # fmt: skip
    tests = [
        headline_test(winners[m], losers[m], n_items, reference=reference, judges=judges[m], vignettes=vignettes[m],
                      first=None if first is None else first[m], counts=weights[m], item_names=names, level=level,
                      fitted=fits[s])
        for s, m in enumerate(masks)
    ]  # fmt: skip
    joint = joint_test(
        fits, set_of, winners, losers, reference=reference, weights=weights, first=first, judges=judges,
        vignettes=vignettes,
    )  # fmt: skip
    estimates = [np.asarray(one.estimates, float)[:n_items] for one in fits]
    per_set = [_set_estimates(name, tests[s], int(masks[s].sum())) for s, name in enumerate(order)]
    differences: list[SetDifference] = []
    for s in range(1, len(order)):
        why = why_no_test(min(tests[0].n_vignettes, tests[s].n_vignettes), count_distinct(judges[masks[0] | masks[s]]))
        pair = [
            _difference(
                names[k], [order[0], order[s]], estimates[s][k] - estimates[0][k], joint, 0, s, k, level, why=why
            )
            for k in range(n_items)
            if k != reference
        ]
        adjusted = holm(np.array([np.nan if d.p is None else d.p for d in pair]))
        differences.extend(dataclasses.replace(d, p_holm=_finite(a)) for d, a in zip(pair, adjusted, strict=True))
    return BySetResult(names, names[reference], per_set, differences, INTERVAL_NAME, level)


def joint_test(
    fits: list[BTResult],
    set_of: np.ndarray,
    winners: np.ndarray,
    losers: np.ndarray,
    *,
    reference: int,
    weights: np.ndarray,
    first: np.ndarray | None,
    judges: np.ndarray,
    vignettes: np.ndarray,
) -> JointTest:
    """The headline test's covariance (headline_test.py: CR2 over vignettes, the judge term as a design effect,
    Satterthwaite df) over the coefficients of every set's fit at once. `set_of` numbers each comparison's set
    (an index into `fits`); vignettes are nested in sets."""
    n_items = len(fits[0].item_names)
    a, b = np.minimum(winners, losers), np.maximum(winners, losers)
    signs = order_signs(winners, losers, first)
    a_side = np.where(winners == a, signs, -signs).astype(np.int64)
    columns: dict[tuple[int, int], int] = {}
    thetas, finite = [], np.zeros((len(fits), n_items), bool)
    for s, one in enumerate(fits):
        theta = one.coefficients()
        finite[s] = np.isfinite(np.asarray(one.estimates, float)[:n_items])
        for k in np.flatnonzero(finite[s]):
            if k != reference:
                columns[(s, int(k))] = len(columns)
                thetas.append(theta[k])
        if len(theta) > n_items:  # this set's order effect
            columns[(s, ORDER)] = len(columns)
            thetas.append(theta[n_items])
    keep = finite[set_of, a] & finite[set_of, b] & (weights > 0)
    key = np.stack([set_of, codes(vignettes), a, b, a_side], axis=1)[keep]
    rows, row_of = distinct_rows(key)
    x = np.zeros((len(rows), len(columns)))
    for r, (s, _, first_item, second_item, sign) in enumerate(rows):
        for item, value in ((first_item, 1.0), (second_item, -1.0)):
            if (s, item) in columns:
                x[r, columns[(s, item)]] = value
        if (s, ORDER) in columns:
            x[r, columns[(s, ORDER)]] = sign
    mu = 1.0 / (1.0 + np.exp(-(x @ np.array(thetas, float))))
    v = mu * (1.0 - mu)
    totals = np.bincount(row_of, weights[keep], minlength=len(rows))
    observed = np.bincount(row_of, weights[keep] * (winners == a)[keep], minlength=len(rows))
    summed = observed - totals * mu
    information = (x * (totals * v)[:, None]).T @ x
    bread = np.linalg.pinv(information, hermitian=True)
    gg, hh, components = _cr2_per_vignette(x, v, totals, summed, rows[:, 1], bread)
    cr2 = bread @ (components.T @ components) @ bread
    judge_scores = x[row_of] * (weights[keep] * ((winners == a)[keep] - mu[row_of]))[:, None]
    design_effect = _judge_design_effect(judge_scores, codes(judges)[keep], codes(vignettes)[keep], bread)
    # As headline_test: no SE below WALD_FLOOR x the model-based (Wald) SE of each coefficient.
    with np.errstate(divide="ignore", invalid="ignore"):
        floor = np.where(np.diag(cr2) > 0, WALD_FLOOR**2 * np.diag(bread) / np.diag(cr2), 1.0)
    design_effect = np.maximum(design_effect, np.nan_to_num(floor, nan=1.0, posinf=1.0))
    return JointTest(columns, cr2, design_effect, gg, hh)


def _set_estimates(name: str, test: HeadlineTest, n_comparisons: int) -> SetEstimates:
    """One set's abilities with the headline test of that set's data alone."""
    return SetEstimates(
        name, test.estimates, test.se, test.p, test.ci_low, test.ci_high, test.df, n_comparisons, test.n_judges,
        test.n_vignettes, test.why_not,
    )  # fmt: skip


def _difference(
    system: str, sets: list[str], estimate: float, joint: JointTest, s: int, t: int, k: int, level: float,
    *, why: str,
) -> SetDifference:  # fmt: skip
    """System k's ability in set t minus set s, tested (p_holm filled in by the caller)."""
    se, df = joint.contrast({(t, k): 1.0, (s, k): -1.0})
    if why or se is None or df is None or not math.isfinite(estimate) or not df >= MIN_DF:
        return SetDifference(system, sets, _finite(estimate), None, None, None, None, None, None)
    p, low, high = _t(float(estimate), se, df, level)
    return SetDifference(system, sets, float(estimate), se, low, high, p, None, df)


def _t(estimate: float, se: float, df: float, level: float) -> tuple[float, float, float]:
    critical = float(stats.t.ppf(0.5 + level / 2, df))
    return float(2 * stats.t.sf(abs(estimate / se), df)), estimate - critical * se, estimate + critical * se


def _finite(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None
