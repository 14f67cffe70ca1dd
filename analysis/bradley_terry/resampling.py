"""Resampling by participant: per-participant count tables, the clustered bootstrap and batched refits."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
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


def cluster_tables(
    winners, losers, n_items, clusters, *, counts=None, signs=None, covariates=None, n_clusters: int | None = None
) -> ClusterTables:
    """Per-cluster tables; clusters are renumbered in sorted order, unless `n_clusters` says they
    already are codes 0..n_clusters-1 (shared by several tables, see `shared_resample`)."""
    counts = np.ones(len(winners)) if counts is None else np.asarray(counts, float)
    grouped = group_comparisons(winners, losers, n_items, counts=counts, signs=signs, covariates=covariates)
    if n_clusters is None:
        _, cluster = np.unique(np.asarray(clusters), return_inverse=True)
        cluster = cluster.ravel()
        n_clusters = int(cluster.max()) + 1
    else:
        cluster = np.asarray(clusters)
    shape = (n_clusters, len(grouped.a))
    a_won = np.minimum(winners, losers) == np.asarray(winners)
    rows = grouped.row_of_comparison

    def table(values):
        return sparse.csr_matrix((values, (cluster, rows)), shape=shape)

    return ClusterTables(grouped, table(counts * a_won), table(counts), n_clusters)


WEIGHTS = ("multinomial", "poisson")
# Bytes that one chunk of replicate weights may take: memory stays flat however many judges
# and replicates there are (issue 13: at 100,000 judges the all-at-once draw peaked at 3.2 GB).
MEMORY_BUDGET = 64 * 2**20


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
    weights: str = "multinomial",
    memory_budget: int = MEMORY_BUDGET,
) -> BootstrapResult:
    """Participant-clustered percentile bootstrap of the abilities.

    It works on sufficient statistics: each participant's win and total counts on the binomial
    rows (pair and order), weighted per replicate and summed. With `weights="multinomial"` (the
    classic pairs bootstrap) replicate r takes participants
    rng.integers(0, n_clusters, size=(n_boot, n_clusters))[r] (participants numbered in sorted
    order of their ids), so a peer can redraw the same samples; `"poisson"` weighs each
    participant by an independent Poisson(1) count instead, rng.poisson(1, (n_boot, n_clusters)).
    Either is drawn in chunks of replicates that fit `memory_budget` bytes (numpy's generator
    gives the same numbers as one draw), and each chunk is refitted as one Newton batch
    warm-started at the full-data estimates. Replicates in which an item never wins or never
    loses are infinite: counted in `n_failed` and left out of the percentiles.
    """
    basis, tables = prepare_tables(
        winners,
        losers,
        n_items,
        reference=reference,
        clusterings=[clusters],
        counts=counts,
        first=first,
        covariates=covariates,
    )
    (table,) = tables
    estimates = resample(table, basis, rng=rng, n_boot=n_boot, weights=weights, memory_budget=memory_budget)
    return _percentiles(estimates[:, :n_items], level)


def resample(
    table: ClusterTables,
    basis: RefitBasis,
    *,
    rng: np.random.Generator,
    n_boot: int,
    weights: str = "multinomial",
    memory_budget: int | None = MEMORY_BUDGET,
) -> np.ndarray:
    """Estimates of `n_boot` replicates that weigh the clusters of `table` (see `bootstrap`).

    From COLLAPSE_FROM clusters on, clusters whose count vectors are identical are resampled as one
    pattern when that leaves at most a quarter as many (a judge x vignette cell usually holds one
    judgment, so a million cells collapse to a hundred patterns): replicate r then draws how many of
    each pattern's m clusters it takes, multinomial(n, m / n) or Poisson(m) per pattern, which is the
    same distribution as drawing the n clusters, in P draws instead of n. Below it, and when
    clusters differ, the draws are those of `replicate_weights`."""
    patterns = identical_clusters(table) if table.n_clusters >= COLLAPSE_FROM else None
    if patterns is None:
        chunk = chunk_size(table, n_boot, memory_budget)
        draws = replicate_weights(rng, table.n_clusters, n_boot, weights=weights, chunk=chunk)
        return refit_replicates(table, draws, basis)
    collapsed, sizes = patterns
    chunk = chunk_size(collapsed, n_boot, memory_budget)
    draws = pattern_weights(rng, sizes, n_boot, weights=weights, chunk=chunk)
    return refit_replicates(collapsed, draws, basis)


# Bytes that one chunk of shared weights (uint16, replicates x clusters) may take.
SHARED_MEMORY_BUDGET = 64 * 2**20
# Clusters per block of the dense count table multiplied by the weights: a block's float32 copy
# stays a few MB, and its sums stay small enough to be exact in float32.
CLUSTER_BLOCK = 8192
EXACT_IN_FLOAT32 = 2**24  # float32 adds and multiplies whole numbers exactly below this


@dataclass(frozen=True)
class DenseTable:
    """One table's binomial rows and its (win rows, then total rows) x clusters counts, dense, in
    the smallest unsigned integer type that holds them (float64 for fractional counts)."""

    grouped: Grouped
    counts: np.ndarray


def dense_table(
    winners: np.ndarray,
    losers: np.ndarray,
    n_items: int,
    clusters: np.ndarray,
    *,
    n_clusters: int,
    counts: np.ndarray | None = None,
    signs: np.ndarray | None = None,
) -> DenseTable:
    """`cluster_tables` as a dense table over clusters coded 0..n_clusters-1, built without the
    sparse tables (at 400,000 judges, 2 million judgments: 22 MB, where the sparse ones take 100)."""
    grouped = group_comparisons(winners, losers, n_items, counts=counts, signs=signs)
    rows = len(grouped.a)
    cell = grouped.row_of_comparison * n_clusters + np.asarray(clusters, np.int64)
    a_won = np.minimum(winners, losers) == np.asarray(winners)
    weights = None if counts is None else np.asarray(counts, float)
    # Totals first: they bound the wins, so each is cast to its small type as soon as it is counted.
    totals = np.bincount(cell, weights=weights, minlength=rows * n_clusters)
    top = float(totals.max(initial=0))
    integral = weights is None or (
        np.array_equal(totals, np.round(totals)) and np.array_equal(weights, np.round(weights))
    )
    dtype = np.min_scalar_type(int(top)) if integral and top < 2**32 else np.float64
    table = np.empty((2 * rows, n_clusters), dtype)
    table[rows:] = totals.reshape(rows, n_clusters)
    del totals
    table[:rows] = np.bincount(
        cell[a_won], weights=None if weights is None else weights[a_won], minlength=rows * n_clusters
    ).reshape(rows, n_clusters)
    # The rows without each comparison's row number: the table holds what the refits need.
    return DenseTable(dataclasses.replace(grouped, row_of_comparison=np.zeros(0, np.int64)), table)


def shared_resample(
    tables: Iterable[DenseTable],
    bases: list[RefitBasis],
    *,
    rng: np.random.Generator,
    n_boot: int,
    weights: str = "multinomial",
    memory_budget: int = SHARED_MEMORY_BUDGET,
) -> list[np.ndarray]:
    """Estimates of `n_boot` replicates for each of several tables over the same clusters (each
    table numbered 0..n-1 alike, see `dense_table`), every table weighing
    cluster c by the same weight in replicate r: a joint bootstrap, valid for each table, whose
    intervals are coherent across tables (the questions a judge answered are resampled together).

    Replicate r weighs the n clusters by np.bincount(rng.integers(0, n, size=n), minlength=n)
    (multinomial) or rng.poisson(1.0, size=n), drawn one replicate after the other, so a peer can
    redraw them. The weights are drawn once for all tables: the tables' win and total counts are
    held once as a dense (rows x clusters) table of small integers, and a chunk of replicates'
    row counts is one matrix product per block of clusters (float32 BLAS, exact while a block's
    sums stay below 2**24, else float64). Tables are taken one at a time; only their rows are kept."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, not {weights!r}.")
    counts, groupeds = _dense_counts(tables)
    if not groupeds:
        return []
    n = counts.shape[1]
    chunk = int(min(max(n_boot, 1), max(1, memory_budget // (2 * max(n, 1)))))
    estimates: list[list[np.ndarray]] = [[] for _ in groupeds]
    for first in range(0, n_boot, chunk):
        draws = np.empty((min(chunk, n_boot - first), n), np.uint16)
        for replicate in range(len(draws)):
            if weights == "poisson":
                drawn = rng.poisson(1.0, size=n)
            else:
                drawn = np.bincount(rng.integers(0, n, size=n), minlength=n)
            if drawn.max(initial=0) > np.iinfo(np.uint16).max:  # a cluster drawn 65,536 times: never seen
                raise ValueError("A bootstrap weight does not fit the shared weights' integers.")
            draws[replicate] = drawn
        row_counts = _weighted_row_counts(counts, draws)
        at = 0
        for position, grouped in enumerate(groupeds):
            rows = len(grouped.a)
            wins = np.ascontiguousarray(row_counts[at : at + rows].T)
            totals = np.ascontiguousarray(row_counts[at + rows : at + 2 * rows].T)
            estimates[position].append(_refit_counts(grouped, wins, totals, bases[position]))
            at += 2 * rows
    return [np.concatenate(parts) for parts in estimates]


@dataclass(frozen=True)
class DenseCounts:
    """Every table's win rows then total rows (x clusters), in the smallest unsigned integer type
    that holds them (float64 for fractional counts), and per block of CLUSTER_BLOCK clusters the
    largest row sum (what bounds a weighted sum in float32)."""

    counts: np.ndarray
    block_sums: list[float]

    @property
    def shape(self) -> tuple[int, int]:
        return self.counts.shape


def _dense_counts(tables: Iterable[DenseTable]) -> tuple[DenseCounts, list[Grouped]]:
    """The tables' counts stacked as one DenseCounts, and their binomial rows."""
    counts, groupeds = None, []
    for table in tables:
        if counts is None:
            counts = np.array(table.counts)
        elif table.counts.shape[1] != counts.shape[1]:
            raise ValueError("Tables resampled together need the same clusters.")
        else:
            # Grown in place (rows appended to a C-ordered array), so the stack is never held twice.
            start, dtype = len(counts), np.result_type(counts, table.counts)
            if dtype != counts.dtype:
                counts = counts.astype(dtype)
            counts.resize((start + len(table.counts), counts.shape[1]), refcheck=False)
            counts[start:] = table.counts
        groupeds.append(table.grouped)
        del table
    if counts is None:
        return DenseCounts(np.zeros((0, 0), np.uint8), []), groupeds
    integral = counts.dtype.kind == "u"
    block_sums = [
        float(counts[:, start : start + CLUSTER_BLOCK].sum(axis=1, dtype=np.float64).max(initial=0))
        if integral
        else np.inf
        for start in range(0, counts.shape[1], CLUSTER_BLOCK)
    ]
    return DenseCounts(counts, block_sums), groupeds


def _weighted_row_counts(table: DenseCounts, draws: np.ndarray) -> np.ndarray:
    """(rows x replicates) sums of the clusters' counts weighed by each replicate's draws."""
    total = np.zeros((table.shape[0], len(draws)))
    top = float(draws.max(initial=0))
    for block, start in enumerate(range(0, table.shape[1], CLUSTER_BLOCK)):
        part, weights = table.counts[:, start : start + CLUSTER_BLOCK], draws[:, start : start + CLUSTER_BLOCK]
        if top * table.block_sums[block] < EXACT_IN_FLOAT32:
            total += part.astype(np.float32) @ weights.T.astype(np.float32)
        else:
            total += part.astype(np.float64) @ weights.T.astype(np.float64)
    return total


# Clusters from which identical ones are resampled together (`resample`): below it, draws stay
# those a peer can redraw with rng.integers or rng.poisson over the clusters.
COLLAPSE_FROM = 20_000


def identical_clusters(table: ClusterTables) -> tuple[ClusterTables, np.ndarray] | None:
    """One row per distinct count vector of the clusters and how many clusters share it, or None
    when fewer than four clusters share a vector on average."""
    counts = sparse.hstack([table.wins, table.totals]).tocsr()
    counts.sum_duplicates()
    # A random projection labels each vector; vectors with one label are then checked to be equal.
    keys = counts @ np.random.default_rng(0).random(counts.shape[1])
    _, first, group = np.unique(keys, return_index=True, return_inverse=True)
    group = group.ravel()
    if len(first) * 4 > table.n_clusters:
        return None
    if (counts - counts[first[group]]).count_nonzero():  # two vectors shared a label: resample them apart
        return None
    sizes = np.bincount(group, minlength=len(first)).astype(float)
    collapsed = ClusterTables(table.grouped, table.wins[first], table.totals[first], len(first))
    return collapsed, sizes


def pattern_weights(
    rng: np.random.Generator, sizes: np.ndarray, n_boot: int, *, weights: str = "multinomial", chunk: int
) -> Iterator[np.ndarray]:
    """(replicates x patterns) how many clusters of each pattern a replicate takes, `chunk` at a time."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, not {weights!r}.")
    n_clusters = int(sizes.sum())
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        if weights == "poisson":
            yield rng.poisson(sizes, size=(size, len(sizes))).astype(float)
        else:
            yield rng.multinomial(n_clusters, sizes / n_clusters, size=size).astype(float)


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


def prepare_dense_table(
    winners: np.ndarray,
    losers: np.ndarray,
    n_items: int,
    *,
    reference: int,
    clusters: np.ndarray,
    n_clusters: int,
    counts: np.ndarray | None = None,
    first: np.ndarray | None = None,
) -> tuple[RefitBasis, DenseTable]:
    """`prepare_tables` for `shared_resample`: the full-data fit and a `dense_table` over the
    comparisons among the items with finite estimates, clusters coded 0..n_clusters-1."""
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    full = fit(winners, losers, n_items, reference=reference, counts=counts, first=first)
    estimable = np.isfinite(full.estimates)
    keep = estimable[winners] & estimable[losers]
    table = dense_table(
        winners[keep],
        losers[keep],
        n_items,
        np.asarray(clusters)[keep],
        n_clusters=n_clusters,
        counts=None if counts is None else np.asarray(counts)[keep],
        signs=None if first is None else order_signs(winners, losers, first)[keep],
    )
    return RefitBasis(full, reference, estimable), table


def chunk_size(tables: ClusterTables, n_boot: int, memory_budget: int | None) -> int:
    """Replicates per chunk: the weights, their draws and the replicate row counts of one
    replicate take about 8 bytes x (5 clusters + 8 rows); `None` means all at once."""
    if memory_budget is None:
        return max(n_boot, 1)
    per_replicate = 8 * (5 * tables.n_clusters + 8 * tables.wins.shape[1])
    return int(min(max(n_boot, 1), max(1, memory_budget // per_replicate)))


def replicate_weights(
    rng: np.random.Generator, n_clusters: int, n_boot: int, *, weights: str = "multinomial", chunk: int
) -> Iterator[np.ndarray]:
    """(replicates x clusters) weights, `chunk` replicates at a time (see `bootstrap`)."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, not {weights!r}.")
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        if weights == "poisson":
            yield rng.poisson(1.0, size=(size, n_clusters)).astype(float)
        else:
            yield _count_draws(rng.integers(0, n_clusters, size=(size, n_clusters)), n_clusters)


def refit_replicates(tables: ClusterTables, chunks: Iterable[np.ndarray], basis: RefitBasis) -> np.ndarray:
    """Estimates of every replicate, refitting one chunk of weights at a time."""
    return np.concatenate([_refit(tables, weights, basis) for weights in chunks])


def _count_draws(draws: np.ndarray, size: int) -> np.ndarray:
    """How often each participant was drawn, per replicate."""
    draws += (np.arange(len(draws)) * size)[:, None]  # in place: one (replicates x clusters) array fewer
    return np.bincount(draws.ravel(), minlength=len(draws) * size).reshape(len(draws), size).astype(float)


def _refit(tables: ClusterTables, multiplicity: np.ndarray, basis: RefitBasis) -> np.ndarray:
    """Estimates per batch member; nan where an ability is infinite or Newton failed."""
    wins, totals = tables.combine(multiplicity)
    return _refit_counts(tables.grouped, wins, totals, basis)


def _refit_counts(grouped: Grouped, wins: np.ndarray, totals: np.ndarray, basis: RefitBasis) -> np.ndarray:
    """`_refit` from each batch member's row counts."""
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


_percentiles = percentile_intervals  # the name benchmarks/bootstrap_memory.py imports
