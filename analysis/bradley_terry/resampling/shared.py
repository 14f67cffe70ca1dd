"""Shared draws: one set of cluster weights per replicate for several tables over the same clusters
(every question of a study), on dense count tables of small integers."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..fitting import fit
from ..grouping import Grouped, group_comparisons, order_signs
from .tables import RefitBasis, check_weights, refit_counts

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
    assert grouped.row_of_comparison is not None  # group_comparisons maps every comparison
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
    check_weights(weights)
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
                drawn = np.bincount(_drawn_clusters(rng, n), minlength=n)
            if drawn.max(initial=0) > np.iinfo(np.uint16).max:  # a cluster drawn 65,536 times: never seen
                raise ValueError("A bootstrap weight does not fit the shared weights' integers.")
            draws[replicate] = drawn
        row_counts = _weighted_row_counts(counts, draws)
        at = 0
        for position, grouped in enumerate(groupeds):
            rows = len(grouped.a)
            wins = np.ascontiguousarray(row_counts[at : at + rows].T)
            totals = np.ascontiguousarray(row_counts[at + rows : at + 2 * rows].T)
            estimates[position].append(refit_counts(grouped, wins, totals, bases[position]))
            at += 2 * rows
    return [np.concatenate(parts) for parts in estimates]


def _drawn_clusters(rng: np.random.Generator, n: int) -> np.ndarray:
    """rng.integers(0, n, size=n): below 2**32 drawn as uint32, the same numbers (numpy draws both with
    its bounded 32-bit generator) a third faster, then widened for bincount (slow on uint32)."""
    if n >= 2**32:
        return rng.integers(0, n, size=n)
    return rng.integers(0, n, size=n, dtype=np.uint32).astype(np.intp)


@dataclass(frozen=True)
class DenseCounts:
    """Every table's win rows then total rows (x clusters), each distinct row held once (`rows`: where each
    row of the stack is held; a study's questions share their total rows, one pair per page), in the
    smallest unsigned integer type that holds them (float64 for fractional counts), and per block of
    CLUSTER_BLOCK clusters the largest row sum (what bounds a weighted sum in float32)."""

    counts: np.ndarray
    rows: np.ndarray
    block_sums: list[float]

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.rows), self.counts.shape[1]


def _dense_counts(tables: Iterable[DenseTable]) -> tuple[DenseCounts, list[Grouped]]:
    """The tables' counts stacked as one DenseCounts, and their binomial rows."""
    counts, groupeds, rows = None, [], []
    held: dict[bytes, list[int]] = {}  # digest of a row -> the held rows with that digest
    for table in tables:
        if counts is None:
            counts = np.zeros((0, table.counts.shape[1]), table.counts.dtype)
        elif table.counts.shape[1] != counts.shape[1]:
            raise ValueError("Tables resampled together need the same clusters.")
        dtype = np.result_type(counts, table.counts)
        if dtype != counts.dtype:
            counts = counts.astype(dtype)
        fresh: list[np.ndarray] = []  # rows of this table not held yet
        for row in table.counts.astype(dtype, copy=False):
            digest = hashlib.blake2b(row, digest_size=16).digest()
            same = [k for k in held.get(digest, []) if np.array_equal(_row(counts, fresh, k), row)]
            if not same:
                same = [len(counts) + len(fresh)]
                fresh.append(row)
                held.setdefault(digest, []).append(same[0])
            rows.append(same[0])
        # Grown in place (rows appended to a C-ordered array), so the stack is never held twice.
        if fresh:
            start = len(counts)
            counts.resize((start + len(fresh), counts.shape[1]), refcheck=False)
            counts[start:] = fresh
        groupeds.append(table.grouped)
        del table
    if counts is None:
        return DenseCounts(np.zeros((0, 0), np.uint8), np.zeros(0, np.intp), []), groupeds
    integral = counts.dtype.kind == "u"
    block_sums = [
        float(counts[:, start : start + CLUSTER_BLOCK].sum(axis=1, dtype=np.float64).max(initial=0))
        if integral
        else np.inf
        for start in range(0, counts.shape[1], CLUSTER_BLOCK)
    ]
    return DenseCounts(counts, np.array(rows, np.intp), block_sums), groupeds


def _row(counts: np.ndarray, fresh: list[np.ndarray], k: int) -> np.ndarray:
    return counts[k] if k < len(counts) else fresh[k - len(counts)]


def _weighted_row_counts(table: DenseCounts, draws: np.ndarray) -> np.ndarray:
    """(rows x replicates) sums of the clusters' counts weighed by each replicate's draws (each distinct row
    summed once: the sums are exact, so a row shared by two tables has one sum)."""
    total = np.zeros((len(table.counts), len(draws)))
    top = float(draws.max(initial=0))
    for block, start in enumerate(range(0, table.shape[1], CLUSTER_BLOCK)):
        part, weights = table.counts[:, start : start + CLUSTER_BLOCK], draws[:, start : start + CLUSTER_BLOCK]
        if top * table.block_sums[block] < EXACT_IN_FLOAT32:
            total += part.astype(np.float32) @ weights.T.astype(np.float32)
        else:
            total += part.astype(np.float64) @ weights.T.astype(np.float64)
    return total[table.rows]


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
