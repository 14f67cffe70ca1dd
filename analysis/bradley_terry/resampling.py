"""Resampling by participant: per-participant count tables, the clustered bootstrap and batched refits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from .fitting import fit
from .general import _scatter, fit_batch
from .grouping import Grouped, group_comparisons, order_signs
from .results import BootstrapResult, BTResult


@dataclass(frozen=True)
class ClusterTables:
    """Per-participant win and total counts on the shared binomial rows."""

    grouped: Grouped
    wins: sparse.csr_matrix  # (n_clusters, rows)
    totals: sparse.csr_matrix
    n_clusters: int

    def combine(self, multiplicity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row counts for each batch member, weighting participant c by multiplicity[:, c]."""
        return (self.wins.T @ multiplicity.T).T, (self.totals.T @ multiplicity.T).T


def cluster_tables(winners, losers, n_items, clusters, *, counts=None, signs=None, covariates=None) -> ClusterTables:
    counts = np.ones(len(winners)) if counts is None else np.asarray(counts, float)
    grouped = group_comparisons(winners, losers, n_items, counts=counts, signs=signs, covariates=covariates)
    _, cluster = np.unique(np.asarray(clusters), return_inverse=True)
    cluster = cluster.ravel()
    n_clusters = int(cluster.max()) + 1
    shape = (n_clusters, len(grouped.a))
    a_won = np.minimum(winners, losers) == np.asarray(winners)
    rows = grouped.row_of_comparison

    def table(values):
        return sparse.csr_matrix((values, (cluster, rows)), shape=shape)

    return ClusterTables(grouped, table(counts * a_won), table(counts), n_clusters)


def bootstrap(
    winners: np.ndarray,
    losers: np.ndarray,
    n_items: int,
    *,
    reference: int,
    clusters: np.ndarray,
    rng: np.random.Generator,
    counts: np.ndarray | None = None,
    first: np.ndarray | None = None,
    covariates: np.ndarray | None = None,
    n_boot: int = 1000,
    level: float = 0.95,
) -> BootstrapResult:
    """Participant-clustered percentile bootstrap of the abilities.

    Replicate r takes participants rng.integers(0, n_clusters, size=(n_boot, n_clusters))[r]
    (participants numbered in sorted order of their ids), so a peer can redraw the same
    samples. All refits run as one Newton batch warm-started at the full-data estimates.
    Replicates in which an item never wins or never loses are infinite: counted in
    `n_failed` and left out of the percentiles.
    """
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    full = fit(
        winners,
        losers,
        n_items,
        reference=reference,
        counts=counts,
        first=first,
        covariates=covariates,
    )
    estimable = np.isfinite(full.estimates)
    keep = estimable[winners] & estimable[losers]
    signs = None if first is None else order_signs(winners, losers, first)[keep]
    tables = cluster_tables(
        winners[keep],
        losers[keep],
        n_items,
        np.asarray(clusters)[keep],
        counts=None if counts is None else np.asarray(counts)[keep],
        signs=signs,
        covariates=None if covariates is None else np.asarray(covariates)[keep],
    )
    draws = rng.integers(0, tables.n_clusters, size=(n_boot, tables.n_clusters))
    multiplicity = _count_draws(draws, tables.n_clusters)
    estimates = _refit(tables, multiplicity, n_items, reference, estimable, full)
    return _percentiles(estimates[:, :n_items], level)


def _count_draws(draws: np.ndarray, size: int) -> np.ndarray:
    """How often each participant was drawn, per replicate."""
    flat = (np.arange(len(draws))[:, None] * size + draws).ravel()
    return np.bincount(flat, minlength=len(draws) * size).reshape(len(draws), size).astype(float)


def _refit(tables, multiplicity, n_items, reference, estimable, full) -> np.ndarray:
    """Estimates per batch member; nan where an ability is infinite or Newton failed."""
    wins, totals = tables.combine(multiplicity)
    grouped = tables.grouped
    item_wins, item_losses = item_wins_and_losses(grouped, wins, totals, n_items)
    finite = ((item_wins > 0) & (item_losses > 0) | ~estimable).all(axis=1)
    start = np.nan_to_num(np.concatenate([full.estimates, _extra_estimates(full)]))
    out = np.full((len(wins), len(start)), np.nan)
    if finite.any():
        batch = fit_batch(
            grouped,
            n_items,
            reference=reference,
            wins=wins[finite],
            totals=totals[finite],
            start=start,
            estimable=estimable,
            max_iter=50,
        )
        out[np.flatnonzero(finite)[batch.converged]] = batch.theta[batch.converged]
    out[:, :n_items][:, ~estimable] = np.nan
    return out


def item_wins_and_losses(grouped: Grouped, wins, totals, n_items) -> tuple[np.ndarray, np.ndarray]:
    """Per batch member, how often each item won and lost on the binomial rows."""
    losses = totals - wins
    item_wins = _scatter(grouped.a, wins, n_items) + _scatter(grouped.b, losses, n_items)
    item_losses = _scatter(grouped.a, losses, n_items) + _scatter(grouped.b, wins, n_items)
    return item_wins, item_losses


def _extra_estimates(result: BTResult) -> np.ndarray:
    effects = ([result.order_effect] if result.order_effect else []) + (result.covariate_effects or [])
    return np.array([effect.estimate for effect in effects], dtype=float)


def _percentiles(estimates: np.ndarray, level: float) -> BootstrapResult:
    ok = np.isfinite(estimates).any(axis=1)
    tail = 100 * (1 - level) / 2
    good = estimates[ok]
    return BootstrapResult(
        ci_low=np.percentile(good, tail, axis=0),
        ci_high=np.percentile(good, 100 - tail, axis=0),
        se=good.std(axis=0, ddof=1),
        estimates=estimates,
        n_failed=int((~ok).sum()),
        level=level,
    )
