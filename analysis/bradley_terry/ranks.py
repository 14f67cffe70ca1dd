"""Claims about ranks: a simultaneous band over the systems and a confidence set for each system's rank.

Single 95% intervals each cover their own system, but all of a question's intervals cover together in far fewer
studies (0.74–0.80 with 6 systems against the reference): "X performed best" needs a joint statement. Both
procedures here start from the headline test's covariance (headline_test.py: CR2 over vignettes × the judge
design effect) and its Satterthwaite degrees of freedom.

The band: every system's interval estimate ± c · SE with one critical value c, the `level` quantile of
max_k |T_k| where T follows the multivariate t with the estimates' correlation. It covers all systems'
abilities (against the reference) together.

The rank sets (Mogstad, Romano, Shaikh & Wilhelm, "Inference for Ranks", REStud 2024; R's csranks with
`simul = TRUE, stepdown = TRUE`): every ordered pair (j, k) is tested for lambda_j > lambda_k with the max-t of the
pairwise differences as critical value, recomputed over the pairs not yet decided until no pair is added
(Romano–Wolf stepdown). With N-_j systems found above j and N+_j below it, j's rank (1 = best) lies in
[1 + N-_j, p - N+_j], for all systems at once with probability `level`. A system with no estimate (it never won
or never lost, or its variance cannot be estimated) can sit anywhere: it widens every other set by one rank
at the bottom end and has no set of its own.

Degrees of freedom: one for each procedure, the smallest Satterthwaite df among the contrasts it uses (each
system against the reference for the band, every pairwise difference for the ranks): conservative when they
differ (unbalanced designs), the headline's own when the design is balanced. The multivariate t quantile is
simulated (`draws` draws from the given generator), as csranks does with its parametric bootstrap; mvtnorm's
`qmvt` gives the same band critical value (tests/analysis/test_ranks.py, in real R).

No band and no rank sets where the headline has no test (fewer than 3 vignettes, one judge): `why_not` says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .headline_test import MIN_DF, HeadlineTest

DRAWS = 100_000
_CHUNK = 1_000_000  # draws x contrasts evaluated at once (8 MB a temporary)


@dataclass(frozen=True)
class RankClaims:
    """Per system (arrays follow `item_names`): the simultaneous band and the rank set (1 = best).

    nan bands and rank 0 where a system has no estimate (`not_ranked[k]` says why) or the question has no test
    (`why_not`)."""

    item_names: list[str]
    reference: str
    level: float
    estimates: np.ndarray
    band_low: np.ndarray
    band_high: np.ndarray
    band_critical: float
    band_df: float
    rank: np.ndarray  # estimated rank among the systems with an estimate (ties share the better rank)
    rank_low: np.ndarray
    rank_high: np.ndarray
    ranks_critical: float  # the first step's critical value (the max-|t| over all pairwise differences)
    ranks_df: float
    why_not: str
    not_ranked: list[str]

    @property
    def tested(self) -> bool:
        return not self.why_not

    def claim(self, k: int) -> str:
        """What may be said of system k's rank, in words: "best with 95% confidence" only when its set is {1}."""
        if self.why_not:
            return "no rank claim: " + _lower_first(self.why_not)
        if self.not_ranked[k]:
            return f"no rank: {self.not_ranked[k]}"
        low, high, percent = int(self.rank_low[k]), int(self.rank_high[k]), f"{self.level:.0%}"
        if low == high == 1:
            return f"best with {percent} confidence"
        if low == high == len(self.item_names):
            return f"worst with {percent} confidence"
        if low == high:
            return f"rank {low} with {percent} confidence"
        return f"rank {low}–{high}"

    def best(self) -> str:
        """The system best with `level` confidence, or "" when no system's rank set is the single rank 1."""
        if self.why_not:
            return ""
        for k, name in enumerate(self.item_names):
            if not self.not_ranked[k] and self.rank_low[k] == self.rank_high[k] == 1:
                return name
        return ""


def rank_claims(
    test: HeadlineTest, *, rng: np.random.Generator, draws: int = DRAWS, level: float | None = None
) -> RankClaims:
    """The simultaneous band and rank sets of one question's headline test (module docstring)."""
    level = test.level if level is None else level
    n = len(test.item_names)
    reference = test.item_names.index(test.reference)
    estimates = np.asarray(test.estimates, float)
    nan = np.full(n, np.nan)
    zeros = np.zeros(n, np.int64)
    not_ranked = [_why_not_ranked(k, test, reference) for k in range(n)]
    ranked = np.array([not reason for reason in not_ranked])
    empty = RankClaims(test.item_names, test.reference, level, estimates, nan, nan.copy(), math.nan, math.nan,
                       zeros, zeros.copy(), zeros.copy(), math.nan, math.nan, test.why_not, not_ranked)  # fmt: skip
    if test.why_not:
        return empty
    if ranked.sum() < 2:
        return replace(empty, why_not="No rank claim: fewer than two systems have an estimate.")
    normal, chi = rng.standard_normal, rng.chisquare  # one stream: the band's draws, then the ranks'

    band_items = np.flatnonzero(ranked & (np.arange(n) != reference))
    band_df = float(np.min(test.df[band_items]))
    covariance = test.covariance[np.ix_(band_items, band_items)]
    se = np.sqrt(np.diag(covariance))
    band_draws = _multivariate_t(covariance, band_df, draws, normal, chi) / se
    band_critical = float(np.quantile(np.max(np.abs(band_draws), axis=1), level))
    band_low, band_high = nan.copy(), nan.copy()
    band_low[band_items] = estimates[band_items] - band_critical * se
    band_high[band_items] = estimates[band_items] + band_critical * se
    band_low[reference] = band_high[reference] = 0.0

    items = np.flatnonzero(ranked)
    pairs_df = _pairwise_df(test, items)
    ranks_df = float(np.nanmin(pairs_df)) if np.isfinite(pairs_df).any() else math.nan
    if not ranks_df >= MIN_DF:
        return RankClaims(test.item_names, test.reference, level, estimates, band_low, band_high, band_critical,
                          band_df, zeros, zeros.copy(), zeros.copy(), math.nan, math.nan,
                          "No rank claim: the differences between systems have under 1 degree of freedom.",
                          not_ranked)  # fmt: skip
    sub = np.nan_to_num(test.covariance[np.ix_(items, items)])
    rank_draws = _multivariate_t(sub, ranks_df, draws, normal, chi)
    above, first_critical = _stepdown_above(estimates[items], sub, rank_draws, level, usable=np.isfinite(pairs_df))
    n_missing = n - len(items)
    rank, low, high = zeros.copy(), zeros.copy(), zeros.copy()
    rank[items] = 1 + np.sum(estimates[items][None, :] > estimates[items][:, None], axis=1)
    low[items] = 1 + above.sum(axis=0)  # systems found above j: column j
    high[items] = len(items) - above.sum(axis=1) + n_missing  # systems found below j: row j
    return RankClaims(test.item_names, test.reference, level, estimates, band_low, band_high, band_critical, band_df,
                      rank, low, high, first_critical, ranks_df, "", not_ranked)  # fmt: skip


def max_abs_t_critical(correlation: np.ndarray, df: float, *, level: float, rng: np.random.Generator,
                       draws: int = DRAWS) -> float:  # fmt: skip
    """The `level` quantile of max_k |T_k|, T multivariate t with `df` and this correlation (mvtnorm's
    `qmvt(level, tail = "both.tails", corr = correlation, df = df)`), by simulation."""
    sample = _multivariate_t(np.asarray(correlation, float), df, draws, rng.standard_normal, rng.chisquare)
    return float(np.quantile(np.max(np.abs(sample), axis=1), level))


def _stepdown_above(estimates, covariance, sample, level, *, usable) -> tuple[np.ndarray, float]:
    """above[j, k]: lambda_j > lambda_k is claimed (csranks' stepdown over all ordered pairs); the first step's
    critical value. `sample` holds draws of the estimates' error (multivariate t); pairs whose difference has
    no variance or no df are never claimed."""
    m = len(estimates)
    variance = np.diag(covariance)[:, None] + np.diag(covariance)[None, :] - 2 * covariance
    with np.errstate(invalid="ignore"):
        sd = np.sqrt(np.where(variance > 0, variance, np.nan))
    difference = estimates[:, None] - estimates[None, :]
    active = np.isfinite(sd) & ~np.eye(m, dtype=bool) & usable
    above = np.zeros((m, m), dtype=bool)
    first_critical = math.nan
    while active.any():
        critical = float(np.quantile(_max_scaled_differences(sample, active, sd), level))
        if math.isnan(first_critical):
            first_critical = critical
        new = active & (difference - critical * np.nan_to_num(sd, nan=np.inf) > 0)
        if not new.any():
            break
        above |= new
        active &= ~new
    return above, first_critical


def _max_scaled_differences(sample, active, sd) -> np.ndarray:
    """Per draw, the max over the active ordered pairs (j, k) of (T_j - T_k) / sd_jk. Each unordered pair's
    difference is computed once and enters with its sign (j before k) or negated (k before j); in chunks."""
    rows, cols = np.nonzero(np.triu(active | active.T, k=1))
    scale = sd[rows, cols]
    forward, backward = active[rows, cols], active[cols, rows]
    step = max(1, _CHUNK // max(1, len(rows)))
    out = np.empty(len(sample))
    for start in range(0, len(sample), step):
        chunk = sample[start : start + step]
        scaled = (chunk[:, rows] - chunk[:, cols]) / scale
        best = np.full(len(chunk), -np.inf)
        if forward.any():
            best = np.maximum(best, scaled[:, forward].max(axis=1))
        if backward.any():
            best = np.maximum(best, -scaled[:, backward].min(axis=1))
        out[start : start + step] = best
    return out


def _multivariate_t(covariance, df, draws, normal, chi) -> np.ndarray:
    """`draws` rows of the multivariate t with this (possibly singular) scale matrix and `df`."""
    values, vectors = np.linalg.eigh(np.asarray(covariance, float))
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    gaussian = normal((draws, len(values))) @ root.T
    if math.isinf(df):  # the normal limit
        return gaussian
    return gaussian / np.sqrt(chi(df, draws) / df)[:, None]


def _pairwise_df(test: HeadlineTest, items: np.ndarray) -> np.ndarray:
    """Satterthwaite df of every pairwise difference among `items` (matrix; nan on the diagonal and where the
    difference has no test)."""
    m = len(items)
    df = np.full((m, m), np.nan)
    for a in range(m):
        for b in range(a + 1, m):
            weights = np.zeros(len(test.item_names))
            weights[items[a]], weights[items[b]] = 1.0, -1.0
            value = test.contrast(weights).df
            if math.isfinite(value) and value >= MIN_DF:
                df[a, b] = df[b, a] = value
    return df


def _why_not_ranked(k: int, test: HeadlineTest, reference: int) -> str:
    if not math.isfinite(test.estimates[k]):
        return "no finite estimate (it never won or never lost), so it could rank anywhere"
    if k != reference and test.not_estimable[k]:
        return test.not_estimable[k]
    return ""


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text else text
