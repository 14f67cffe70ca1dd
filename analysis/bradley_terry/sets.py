"""Results by vignette set and each system's difference between sets (docs/statistics.md, "Vignette sets").

A study's vignettes may belong to sets (kinds: `published`, `novel`). Every comparison is made on one vignette,
so on one set, and the model with a set interaction,

    logit P(i beats j on a vignette of set s) = lambda_i,s - lambda_j,s   (lambda_reference,s = 0),

is R's `BTm(..., formula = ~ system[ID] + system[ID]:set)`: its likelihood is the product of one fit per set, so
the estimates are the per-set fits'. The difference of system k between sets s and t is lambda_k,t - lambda_k,s.
Its variance is not the sum of the two per-set variances: a judge who judged both sets ties them, so the
covariance comes from one sandwich over the joint coefficients (every set's abilities and order effect), clustered
by judge and by vignette (vignettes are nested in sets), with the t reference of the study's headline interval.
Holm's adjustment runs across the systems of each pair of sets.

`joint_test` is the one place that says how the joint covariance and its degrees of freedom are computed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse, stats

from .diagnostics import holm
from .fitting import fit
from .labels import codes, count_distinct
from .results import BTResult
from .robust import multiway_meat, sandwich, score_contributions

MIN_VIGNETTES = 3  # per set, as for the headline (analysis/results/headline.py)
INTERVAL_NAME = "cluster-robust (judge × vignette), t with the fewer clusters - 1 df"


@dataclass(frozen=True)
class SetEstimates:
    """One set's abilities with the headline interval; arrays follow the items."""

    name: str
    estimates: np.ndarray
    se: np.ndarray
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    df: float | None
    n_comparisons: int
    n_judges: int
    n_vignettes: int


@dataclass(frozen=True)
class SetDifference:
    """System `system`'s ability in `sets[1]` minus its ability in `sets[0]`, tested."""

    system: str
    sets: tuple[str, str]
    estimate: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    p_holm: float | None
    df: float | None

    def as_dict(self) -> dict:
        return {
            "system": self.system,
            "sets": list(self.sets),
            "estimate": self.estimate,
            "se": self.se,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "p": self.p,
            "p_holm": self.p_holm,
            "df": self.df,
        }


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
                    "df": one.df,
                    "n_comparisons": one.n_comparisons,
                    "n_judges": one.n_judges,
                    "n_vignettes": one.n_vignettes,
                    "items": [
                        {"item": name}
                        | {key: _finite(getattr(one, key)[k]) for key in ("estimates", "se", "p", "ci_low", "ci_high")}
                        for k, name in enumerate(self.item_names)
                    ],
                }
                for one in self.sets
            ],
            "differences": [difference.as_dict() for difference in self.differences],
        }


@dataclass(frozen=True)
class JointTest:
    """The joint covariance of every set's coefficients, and the t reference of a contrast of them."""

    covariance: np.ndarray  # (coefficients of set 0, of set 1, ...); fixed (reference) rows zero
    offsets: list[int]  # where each set's coefficients start
    df: float | None

    def contrast(self, weights: np.ndarray) -> tuple[float | None, float | None]:
        """The SE and df of sum(weights * coefficients); SE None when its variance is not positive."""
        variance = float(weights @ self.covariance @ weights)
        return (math.sqrt(variance) if variance > 0 and math.isfinite(variance) else None), self.df


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
    masks = [labels == name for name in order]
    fits = [
        fit(winners[m], losers[m], n_items, reference=reference, counts=weights[m],
            first=None if first is None else np.asarray(first)[m], item_names=names)
        for m in masks
    ]  # fmt: skip
    joint = joint_test(fits, masks, winners, losers, weights=weights, first=first, judges=judges, vignettes=vignettes)
    estimates = [np.asarray(one.estimates, float)[:n_items] for one in fits]
    per_set = [
        _set_estimates(name, estimates[s], joint, s, n_items, reference, masks[s], judges, vignettes, level)
        for s, name in enumerate(order)
    ]
    differences: list[SetDifference] = []
    for s in range(1, len(order)):
        pair = [
            _difference(names[k], (order[0], order[s]), estimates[s][k] - estimates[0][k], joint, 0, s, k, level)
            for k in range(n_items)
            if k != reference
        ]
        adjusted = holm(np.array([np.nan if d.p is None else d.p for d in pair]))
        differences.extend(dataclasses.replace(d, p_holm=_finite(a)) for d, a in zip(pair, adjusted, strict=True))
    return BySetResult(names, names[reference], per_set, differences, INTERVAL_NAME, level)


def joint_test(
    fits: list[BTResult],
    masks: list[np.ndarray],
    winners: np.ndarray,
    losers: np.ndarray,
    *,
    weights: np.ndarray,
    first: np.ndarray | None,
    judges: np.ndarray,
    vignettes: np.ndarray,
) -> JointTest:
    """The sandwich over every set's coefficients at once, clustered by judge and by vignette (vcovCL's two-way,
    HC0), t with the fewer of judges and vignettes - 1 df: the headline interval's rule, on the joint model."""
    blocks, breads, offsets, offset = [], [], [], 0
    for one, mask in zip(fits, masks, strict=True):
        assert one.covariance is not None  # every fit sets it
        scores = score_contributions(
            one, winners[mask], losers[mask], counts=weights[mask], first=None if first is None else first[mask]
        )
        placed = sparse.lil_matrix((len(winners), scores.shape[1]))
        placed[np.flatnonzero(mask)] = scores
        blocks.append(placed.tocsr())
        breads.append(np.nan_to_num(one.covariance))
        offsets.append(offset)
        offset += scores.shape[1]
    scores = sparse.hstack(blocks).tocsr()
    bread = _block_diagonal(breads)
    meat = multiway_meat(scores, [judges, vignettes])
    df = min(count_distinct(judges), count_distinct(vignettes)) - 1
    return JointTest(sandwich(bread, meat, n=len(winners)), offsets, float(df))


def _set_estimates(
    name, estimates, joint: JointTest, s: int, n_items, reference, mask, judges, vignettes, level
) -> SetEstimates:
    n_judges, n_vignettes = count_distinct(judges[mask]), count_distinct(vignettes[mask])
    df = float(min(n_judges, n_vignettes) - 1)
    se, p, low, high = (np.full(n_items, np.nan) for _ in range(4))
    for k in range(n_items):
        if k == reference:
            se[k], low[k], high[k] = 0.0, 0.0, 0.0
            continue
        unit = np.zeros(len(joint.covariance))
        unit[joint.offsets[s] + k] = 1.0
        error, _ = joint.contrast(unit)
        if error is None or not np.isfinite(estimates[k]) or n_vignettes < MIN_VIGNETTES:
            continue
        se[k] = error
        p[k], low[k], high[k] = _t(estimates[k], error, df, level)
    return SetEstimates(name, estimates, se, p, low, high, df, int(mask.sum()), n_judges, n_vignettes)


def _difference(system, sets, estimate, joint: JointTest, s: int, t: int, k: int, level: float) -> SetDifference:
    """System k's ability in set t minus set s, tested (p_holm filled in by the caller)."""
    weights = np.zeros(len(joint.covariance))
    weights[joint.offsets[t] + k], weights[joint.offsets[s] + k] = 1.0, -1.0
    se, df = joint.contrast(weights)
    if se is None or not math.isfinite(estimate) or df is None or df < 1:
        return SetDifference(system, sets, _finite(estimate), None, None, None, None, None, df)
    p, low, high = _t(float(estimate), se, df, level)
    return SetDifference(system, sets, float(estimate), se, low, high, p, None, df)


def _t(estimate: float, se: float, df: float, level: float) -> tuple[float, float, float]:
    critical = float(stats.t.ppf(0.5 + level / 2, df))
    return float(2 * stats.t.sf(abs(estimate / se), df)), estimate - critical * se, estimate + critical * se


def _block_diagonal(blocks: list[np.ndarray]) -> np.ndarray:
    size = sum(len(block) for block in blocks)
    out, at = np.zeros((size, size)), 0
    for block in blocks:
        out[at : at + len(block), at : at + len(block)] = block
        at += len(block)
    return out


def _finite(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None
