"""Multiplicity, reliability and order diagnostics, and simulated comparisons."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .fitting import fit
from .grouping import Grouped
from .labels import codes
from .resampling import MEMORY_BUDGET, ClusterTables, RefitBasis, cluster_tables
from .resampling.participants import replicates_per_chunk
from .resampling.tables import refit_counts
from .results import BTResult


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (nan entries stay nan and do not count)."""
    pvalues = np.asarray(pvalues, float)
    adjusted = np.full(pvalues.shape, np.nan)
    present = np.flatnonzero(np.isfinite(pvalues))
    order = present[np.argsort(pvalues[present], kind="stable")]
    m = len(order)
    stepped = (m - np.arange(m)) * pvalues[order]
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(stepped))
    return adjusted


def centred_abilities(result: BTResult) -> tuple[np.ndarray, np.ndarray]:
    """Abilities centred to mean zero and their SEs, V' = M V M^T (reference-free)."""
    k = len(result.item_names)
    centring = np.eye(k) - 1.0 / k
    assert result.covariance is not None  # every fit sets it
    covariance = centring @ result.covariance[:k, :k] @ centring.T
    return centring @ result.estimates, np.sqrt(np.clip(np.diag(covariance), 0, None))


def separation_reliability(result: BTResult) -> float:
    """Rasch-style separation reliability (var(est) - mean(se^2)) / var(est).

    Uses centred abilities so that the answer does not depend on the reference item (whose
    reference-coded SE would be an artificial 0); var uses ddof=1. It can be negative when
    the abilities differ less than their noise.
    """
    estimates, se = centred_abilities(result)
    variance = np.var(estimates, ddof=1)
    return float((variance - np.mean(se**2)) / variance)


@dataclass(frozen=True)
class SplitHalfResult:
    """Agreement of abilities fitted on random halves of the judges.

    `value` is the Spearman-Brown corrected mean correlation 2r / (1 + r) when r >= 0, and r
    itself when r < 0 (the correction maps r near -1 to values far below -1: -4.3 was seen with
    no true differences), so it always lies in [-1, 1]; `spearman_brown` says which was used.
    """

    value: float
    mean_correlation: float
    spearman_brown: bool
    n_splits: int  # splits whose halves both gave finite abilities

    def in_words(self) -> str:
        if not np.isfinite(self.value):
            return "No split of the judges gave finite abilities in both halves."
        if self.spearman_brown:
            return (
                f"Split-half reliability {self.value:.2f}: the mean correlation between abilities fitted on "
                f"random halves of the judges ({self.mean_correlation:.2f}), stepped up to the full data "
                f"(Spearman-Brown), over {self.n_splits} splits."
            )
        return (
            f"The abilities fitted on random halves of the judges correlate negatively on average "
            f"(r = {self.mean_correlation:.2f} over {self.n_splits} splits): the halves do not agree on the "
            "order of the systems. The Spearman-Brown step-up is not defined below 0, so the raw correlation "
            "is shown."
        )


def split_half_reliability(
    winners: np.ndarray,
    losers: np.ndarray,
    clusters: np.ndarray,
    n_items: int,
    reference: int,
    rng: np.random.Generator,
    *,
    counts: np.ndarray | None = None,
    n_splits: int = 100,
) -> float:
    """The value of `split_half` (kept for callers that store a bare number)."""
    return split_half(winners, losers, clusters, n_items, reference, rng, counts=counts, n_splits=n_splits).value


def split_half(
    winners: np.ndarray,
    losers: np.ndarray,
    clusters: np.ndarray,
    n_items: int,
    reference: int,
    rng: np.random.Generator,
    *,
    counts: np.ndarray | None = None,
    n_splits: int = 100,
    memory_budget: int = MEMORY_BUDGET,
    halves: np.ndarray | None = None,
) -> SplitHalfResult:
    """Mean correlation between abilities fitted on random halves of the participants (splits
    where a half has an infinite ability are skipped), Spearman-Brown corrected when >= 0.

    The halves are `split_halves(rng, n_clusters, n_splits)` (participants numbered in sorted order of
    their ids); `halves` passes ones already drawn so (a refit draws them once for all its questions)."""
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    basis = RefitBasis(
        fit(winners, losers, n_items, reference=reference, counts=counts), reference, np.ones(n_items, bool)
    )
    cluster = codes(clusters)
    n_clusters = int(cluster.max()) + 1 if len(cluster) else 0
    if halves is None:
        halves = split_halves(rng, n_clusters, n_splits)
    if halves.shape != (n_splits, (n_clusters + 7) // 8):
        raise ValueError("The split halves drawn do not match the participants and splits.")
    half_counts = _HalfCounts.of(winners, losers, n_items, cluster, n_clusters, counts=counts, halves=halves)
    rows = len(half_counts.grouped.a)
    chunk = max(1, replicates_per_chunk(n_clusters, rows, 2 * n_splits, memory_budget) // 2)
    correlations = []
    for start in range(0, n_splits, chunk):
        size = min(chunk, n_splits - start)
        wins, totals = half_counts.both(start, size)
        estimates = refit_counts(half_counts.grouped, wins, totals, basis)[:, :n_items]
        correlations += [_correlation(x, y) for x, y in zip(estimates[:size], estimates[size:], strict=True)]
    used = np.array([r for r in correlations if np.isfinite(r)])
    r = float(used.mean()) if used.size else float("nan")
    stepped = r >= 0
    return SplitHalfResult(2 * r / (1 + r) if stepped else r, r, bool(stepped), int(used.size))


@dataclass(frozen=True)
class _HalfCounts:
    """Each split's halves as the wins and totals of the binomial rows, from the per-participant tables. With
    whole counts the first halves' are summed for many splits at once (one pass over the tables for eight
    splits, single-threaded: no BLAS threads to wait for on a busy machine) and a second half's are the
    full counts minus its first's, exactly; with fractional ones both are summed split by split."""

    tables: ClusterTables
    halves: np.ndarray  # packed, see `split_halves`
    firsts: np.ndarray | None  # whole counts: (splits, win rows then total rows) of the first halves

    @classmethod
    def of(cls, winners, losers, n_items, cluster, n_clusters, *, counts, halves) -> _HalfCounts:
        tables = cluster_tables(winners, losers, n_items, cluster, counts=counts, n_clusters=n_clusters)
        if counts is not None and not np.array_equal(counts, np.round(counts)):
            return cls(tables, halves, None)
        firsts = [
            np.concatenate(tables.combine(_unpacked(halves[start : start + 8], n_clusters)), axis=1)
            for start in range(0, len(halves), 8)
        ]
        return cls(tables, halves, np.concatenate(firsts))

    @property
    def grouped(self) -> Grouped:
        return self.tables.grouped

    def both(self, start: int, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Wins and totals (rows x binomial rows) of splits start .. start + size - 1: first halves, then second."""
        if self.firsts is None:
            first = _unpacked(self.halves[start : start + size], self.tables.n_clusters)
            return self.tables.combine(np.concatenate([first, 1.0 - first]))
        rows = len(self.grouped.a)
        first = self.firsts[start : start + size]
        both = np.concatenate([first, np.concatenate([self.grouped.wins, self.grouped.totals]) - first])
        return np.ascontiguousarray(both[:, :rows]), np.ascontiguousarray(both[:, rows:])


def _unpacked(halves: np.ndarray, n_clusters: int) -> np.ndarray:
    return np.unpackbits(halves, axis=1, count=n_clusters).astype(float)


def split_halves(rng: np.random.Generator, n_clusters: int, n_splits: int) -> np.ndarray:
    """Which participants each split puts in its first half, as packed bits (n_splits x ceil(n_clusters / 8)):
    row s of rng.permuted(np.tile(np.arange(n_clusters) % 2, (n_splits, 1)), axis=1), drawn row after row."""
    pattern = (np.arange(n_clusters) % 2).astype(np.uint8)
    halves = np.empty((n_splits, (n_clusters + 7) // 8), np.uint8)
    for split in range(n_splits):
        halves[split] = np.packbits(rng.permuted(pattern))
    return halves


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    if not (np.isfinite(x).all() and np.isfinite(y).all()) or np.std(x) == 0 or np.std(y) == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def first_position_rate(first: np.ndarray, winners: np.ndarray, counts: np.ndarray | None = None) -> float:
    """Share of comparisons with a known first item (first >= 0) won by the item shown first."""
    first, winners = np.asarray(first), np.asarray(winners)
    counts = np.ones(len(winners)) if counts is None else np.asarray(counts, float)
    known = first >= 0
    return float(counts[known & (first == winners)].sum() / counts[known].sum())


def simulate(
    abilities: np.ndarray,
    first_items: np.ndarray,
    second_items: np.ndarray,
    rng: np.random.Generator,
    *,
    order_effect: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """One outcome per (first, second) pair: P(first wins) = expit(l_f - l_s + delta)."""
    abilities = np.asarray(abilities, float)
    first_items, second_items = np.asarray(first_items), np.asarray(second_items)
    eta = abilities[first_items] - abilities[second_items] + order_effect
    first_wins = rng.random(len(first_items)) < 1.0 / (1.0 + np.exp(-eta))
    winners = np.where(first_wins, first_items, second_items)
    losers = np.where(first_wins, second_items, first_items)
    return winners, losers
