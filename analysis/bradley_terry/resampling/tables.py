"""What every resampling design shares: per-cluster count tables, the weight kinds, the batched refit
of weighted tables from the full-data fit, and percentile intervals of the replicates."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..fitting import fit
from ..general import _scatter, fit_batch
from ..grouping import Grouped, group_comparisons, order_signs
from ..labels import codes
from ..results import BootstrapResult, BTResult


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


def cluster_tables(
    winners, losers, n_items, clusters, *, counts=None, signs=None, covariates=None, n_clusters: int | None = None
) -> ClusterTables:
    """Per-cluster tables; clusters are renumbered in sorted order, unless `n_clusters` says they
    already are codes 0..n_clusters-1 (shared by several tables, see `shared_resample`)."""
    counts = np.ones(len(winners)) if counts is None else np.asarray(counts, float)
    grouped = group_comparisons(winners, losers, n_items, counts=counts, signs=signs, covariates=covariates)
    if n_clusters is None:
        cluster = codes(clusters)
        n_clusters = int(cluster.max()) + 1
    else:
        cluster = np.asarray(clusters)
    shape = (n_clusters, len(grouped.a))
    a_won = np.minimum(winners, losers) == np.asarray(winners)
    rows = grouped.row_of_comparison
    assert rows is not None  # group_comparisons maps every comparison

    def table(values):
        return sparse.csr_matrix((values, (cluster, rows)), shape=shape)

    return ClusterTables(grouped, table(counts * a_won), table(counts), n_clusters)


WEIGHTS = ("multinomial", "poisson")


def check_weights(weights: str) -> None:
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, not {weights!r}.")


@dataclass(frozen=True)
class RefitBasis:
    """What every replicate refit shares: the full-data fit (its warm start), the reference
    and the items with finite estimates (the others stay empty)."""

    full: BTResult
    reference: int
    estimable: np.ndarray

    @property
    def n_items(self) -> int:
        return len(self.estimable)


def prepare_tables(
    winners: np.ndarray,
    losers: np.ndarray,
    n_items: int,
    *,
    reference: int,
    clusterings: list[np.ndarray],
    counts: np.ndarray | None = None,
    first: np.ndarray | None = None,
    covariates: np.ndarray | None = None,
    n_clusters: int | None = None,
) -> tuple[RefitBasis, Iterator[ClusterTables]]:
    """The full-data fit, and per-cluster count tables (one per clustering) over the comparisons
    among the items with finite estimates.

    The tables are built one at a time as they are taken, so a caller that resamples one
    clustering after the other holds one table at a time (a million judgments' table is ~50 MB)."""
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    full = fit(winners, losers, n_items, reference=reference, counts=counts, first=first, covariates=covariates)
    estimable = np.isfinite(full.estimates)
    keep = estimable[winners] & estimable[losers]
    signs = None if first is None else order_signs(winners, losers, first)[keep]

    def tables() -> Iterator[ClusterTables]:
        for clusters in clusterings:
            yield cluster_tables(
                winners[keep],
                losers[keep],
                n_items,
                np.asarray(clusters)[keep],
                counts=None if counts is None else np.asarray(counts)[keep],
                signs=signs,
                covariates=None if covariates is None else np.asarray(covariates)[keep],
                n_clusters=n_clusters,
            )

    return RefitBasis(full, reference, estimable), tables()


def refit_replicates(tables: ClusterTables, chunks: Iterable[np.ndarray], basis: RefitBasis) -> np.ndarray:
    """Estimates of every replicate, refitting one chunk of weights at a time."""
    return np.concatenate([refit_weighted(tables, weights, basis) for weights in chunks])


def refit_weighted(tables: ClusterTables, multiplicity: np.ndarray, basis: RefitBasis) -> np.ndarray:
    """Estimates per batch member; nan where an ability is infinite or Newton failed."""
    wins, totals = tables.combine(multiplicity)
    return refit_counts(tables.grouped, wins, totals, basis)


def refit_counts(grouped: Grouped, wins: np.ndarray, totals: np.ndarray, basis: RefitBasis) -> np.ndarray:
    """`refit_weighted` from each batch member's row counts."""
    n_items, estimable = basis.n_items, basis.estimable
    item_wins, item_losses = item_wins_and_losses(grouped, wins, totals, n_items)
    finite = ((item_wins > 0) & (item_losses > 0) | ~estimable).all(axis=1)
    start = np.nan_to_num(basis.full.coefficients())
    out = np.full((len(wins), len(start)), np.nan)
    if finite.any():
        batch = fit_batch(
            grouped,
            n_items,
            reference=basis.reference,
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


def percentile_intervals(estimates: np.ndarray, level: float = 0.95) -> BootstrapResult:
    """Percentile intervals of replicate estimates (rows); replicates with no finite estimate are failed."""
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
