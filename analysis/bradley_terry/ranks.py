"""Claims about ranks: a simultaneous band over the systems and a confidence set for each system's rank.

Single 95% intervals each cover their own system, but all of a question's intervals cover together in far fewer
studies (0.74–0.80 with 6 systems against the reference): "X performed best" needs a joint statement. Both
procedures here start from the headline test's covariance (headline_test.py: CR2 over vignettes × the judge
design effect) and its Satterthwaite degrees of freedom.

The band: every system's interval estimate ± c · SE with one critical value c, the `level` quantile of
max_k |T_k| over the systems. It covers all systems' abilities (against the reference) together.

The rank sets (Mogstad, Romano, Shaikh & Wilhelm, "Inference for Ranks", REStud 2024; R's csranks with
`simul = TRUE, stepdown = TRUE`): every ordered pair (j, k) is tested for lambda_j > lambda_k with the max-t of the
pairwise differences as critical value, recomputed over the pairs not yet decided until no pair is added
(Romano–Wolf stepdown). With N-_j systems found above j and N+_j below it, j's rank (1 = best) lies in
[1 + N-_j, p - N+_j], for all systems at once with probability `level`. A system with no estimate (it never won
or never lost, or its variance cannot be estimated) can sit anywhere: it widens every other set by one rank
at the bottom end and has no set of its own.

The reference distribution of the t statistics. With few vignettes each system's CR2 variance is estimated from
the same handful of vignette clusters, but not with one common error: the variances of different systems (and
differences) err differently. So T_c = c'Z / sqrt(c'Wc) with Z ~ N(0, S) and W ~ Wishart(n, S) / n independent, S
the headline covariance: each T_c is exactly t with n df, as the single intervals are, and jointly they are the
Hotelling-type approximation clubSandwich uses for multi-parameter tests. The textbook multivariate t (one common
chi-square, mvtnorm's `qmvt`) is the limit of perfectly correlated variance errors: it gives a smaller critical value,
and in the seed design at 3 vignettes its band covered all six systems in only 0.875 of studies (benchmarks/
rank_coverage.py); the Wishart one is the same as `qmvt` when the variance is known (n = inf) and as Šidák's t when
the estimates are independent (tests/analysis/test_ranks.py). n is the smallest Satterthwaite df among the contrasts
a procedure uses (each system against the reference for the band, every pairwise difference for the ranks), rounded
down: the headline's own df when the design is balanced, conservative when they differ (unbalanced designs). The
quantiles are simulated (`draws` seeded draws, as csranks does with its parametric bootstrap).

No band and no rank sets where the headline has no test (fewer than 3 vignettes, one judge): `why_not` says why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .headline_test import MIN_DF, HeadlineTest

DRAWS = 50_000  # the critical value's Monte Carlo SE: about 0.01
_CHUNK = 2_000_000  # numbers drawn per chunk of draws (16 MB)


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
    band_seed, ranks_seed = (int(seed) for seed in rng.integers(1 << 62, size=2))

    band_items = np.flatnonzero(ranked & (np.arange(n) != reference))
    band_df = float(np.min(test.df[band_items]))
    covariance = test.covariance[np.ix_(band_items, band_items)]
    se = np.sqrt(np.diag(covariance))
    band_critical = _max_t_quantile(covariance, band_df, level, draws, band_seed)
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
    errors = _ErrorDraws(sub, ranks_df, draws, ranks_seed)
    above, first_critical = _stepdown_above(estimates[items], sub, errors, level, usable=np.isfinite(pairs_df))
    n_missing = n - len(items)
    rank, low, high = zeros.copy(), zeros.copy(), zeros.copy()
    rank[items] = 1 + np.sum(estimates[items][None, :] > estimates[items][:, None], axis=1)
    low[items] = 1 + above.sum(axis=0)  # systems found above j: column j
    high[items] = len(items) - above.sum(axis=1) + n_missing  # systems found below j: row j
    return RankClaims(test.item_names, test.reference, level, estimates, band_low, band_high, band_critical, band_df,
                      rank, low, high, first_critical, ranks_df, "", not_ranked)  # fmt: skip


def max_abs_t_critical(covariance: np.ndarray, df: float, *, level: float, rng: np.random.Generator,
                       draws: int = DRAWS) -> float:  # fmt: skip
    """The `level` quantile of max_k |T_k| (module docstring: T_k = Z_k / sqrt(W_kk), Z ~ N(0, covariance),
    W ~ Wishart(floor(df), covariance) / floor(df); df = inf: W = covariance, mvtnorm's normal case)."""
    return _max_t_quantile(np.asarray(covariance, float), df, level, draws, int(rng.integers(1 << 62)))


def _max_t_quantile(covariance, df, level, draws, seed) -> float:
    errors = _ErrorDraws(covariance, df, draws, seed)
    every = np.arange(len(covariance))
    maxima = [np.max(np.abs(z / np.sqrt(errors.variance(m, every))), axis=1) for z, m in errors.chunks()]
    return float(np.quantile(np.concatenate(maxima), level))


class _ErrorDraws:
    """Draws of the estimates' error Z ~ N(0, S) with their estimated covariance W ~ Wishart(n, S) / n, n = floor(df),
    as W = M M' / n: the same chunks each time `chunks()` is called (one seed per chunk)."""

    def __init__(self, covariance: np.ndarray, df: float, draws: int, seed: int):
        values, vectors = np.linalg.eigh(covariance)
        keep = values > 1e-12 * max(float(values.max()), 1e-300)
        self.root = vectors[:, keep] * np.sqrt(values[keep])  # S = root root' (rank r; the reference's row is 0)
        self.n = None if math.isinf(df) else max(1, math.floor(df + 1e-6))  # 1e-6: Satterthwaite's 11.0000002
        m, r = self.root.shape
        q = r if self.n is None else min(self.n, r)
        self.chunk = max(1, _CHUNK // max(1, m * q * max(1, m)))
        self.draws = draws
        self.seeds = np.random.SeedSequence(seed).spawn(-(-draws // self.chunk))

    def chunks(self):
        m, r = self.root.shape
        for index, seed in enumerate(self.seeds):
            rng = np.random.default_rng(seed)
            size = min(self.chunk, self.draws - index * self.chunk)
            z = rng.standard_normal((size, r)) @ self.root.T
            if self.n is None:  # the variance known: W = S
                factor = np.broadcast_to(self.root, (size, m, r))
            elif self.n >= r:  # Bartlett: W = root A A' root' / n, A lower triangular
                a = np.zeros((size, r, r))
                below = np.tril_indices(r, -1)
                a[:, below[0], below[1]] = rng.standard_normal((size, len(below[0])))
                for i in range(r):
                    a[:, i, i] = np.sqrt(rng.chisquare(self.n - i, size))
                factor = self.root @ a
            else:  # singular Wishart: n draws of N(0, S) as columns
                factor = np.swapaxes(rng.standard_normal((size, self.n, r)) @ self.root.T, 1, 2)
            yield z, factor

    def variance(self, factor: np.ndarray, rows: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
        """Per draw, the estimated variance of Z_row (or of Z_row - Z_col)."""
        picked = factor[:, rows] if cols is None else factor[:, rows] - factor[:, cols]
        return np.sum(picked * picked, axis=2) / (1 if self.n is None else self.n)


def _stepdown_above(estimates, covariance, errors: _ErrorDraws, level, *, usable) -> tuple[np.ndarray, float]:
    """above[j, k]: lambda_j > lambda_k is claimed (csranks' stepdown over all ordered pairs); the first step's
    critical value. Pairs whose difference has no variance or no df are never claimed."""
    m = len(estimates)
    variance = np.diag(covariance)[:, None] + np.diag(covariance)[None, :] - 2 * covariance
    with np.errstate(invalid="ignore"):
        sd = np.sqrt(np.where(variance > 0, variance, np.nan))
    difference = estimates[:, None] - estimates[None, :]
    active = np.isfinite(sd) & ~np.eye(m, dtype=bool) & usable
    above = np.zeros((m, m), dtype=bool)
    first_critical = math.nan
    while active.any():
        critical = float(np.quantile(_max_differences(errors, active), level))
        if math.isnan(first_critical):
            first_critical = critical
        new = active & (difference - critical * np.nan_to_num(sd, nan=np.inf) > 0)
        if not new.any():
            break
        above |= new
        active &= ~new
    return above, first_critical


def _max_differences(errors: _ErrorDraws, active: np.ndarray) -> np.ndarray:
    """Per draw, the max over the active ordered pairs (j, k) of (Z_j - Z_k) / its estimated SD. Each unordered
    pair is computed once and enters with its sign (j before k) or negated (k before j)."""
    rows, cols = np.nonzero(np.triu(active | active.T, k=1))
    forward, backward = active[rows, cols], active[cols, rows]
    maxima = []
    for z, factor in errors.chunks():
        scaled = (z[:, rows] - z[:, cols]) / np.sqrt(errors.variance(factor, rows, cols))
        best = np.full(len(z), -np.inf)
        if forward.any():
            best = np.maximum(best, scaled[:, forward].max(axis=1))
        if backward.any():
            best = np.maximum(best, -scaled[:, backward].min(axis=1))
        maxima.append(best)
    return np.concatenate(maxima)


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
