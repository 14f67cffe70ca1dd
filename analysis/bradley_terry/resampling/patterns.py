"""Collapsing identical clusters: clusters with the same count vector resampled as one pattern."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy import sparse

from .tables import ClusterTables, check_weights

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
    if not _rows_equal(counts, first[group]):  # two vectors shared a label: resample them apart
        return None
    sizes = np.bincount(group, minlength=len(first)).astype(float)
    collapsed = ClusterTables(table.grouped, table.wins[first], table.totals[first], len(first))
    return collapsed, sizes


def _rows_equal(counts: sparse.csr_matrix, others: np.ndarray, *, rows: int = 1 << 18) -> bool:
    """Whether each row of `counts` (canonical: sorted, summed) equals row others[i] as a vector, compared
    entry by entry a block of rows at a time (a million clusters' difference matrix took hundreds of MB)."""
    counts.eliminate_zeros()  # then equal rows hold the same entries
    lengths = np.diff(counts.indptr)
    if (lengths != lengths[others]).any():
        return False
    for start in range(0, counts.shape[0], rows):
        block = slice(start, min(start + rows, counts.shape[0]))
        entries = np.arange(counts.indptr[block.start], counts.indptr[block.stop])
        row = np.repeat(np.arange(block.start, block.stop), lengths[block])
        partner = counts.indptr[others[row]] + (entries - counts.indptr[row])
        if not (
            np.array_equal(counts.indices[entries], counts.indices[partner])
            and np.array_equal(counts.data[entries], counts.data[partner])
        ):
            return False
    return True


def pattern_weights(
    rng: np.random.Generator, sizes: np.ndarray, n_boot: int, *, weights: str = "multinomial", chunk: int
) -> Iterator[np.ndarray]:
    """(replicates x patterns) how many clusters of each pattern a replicate takes, `chunk` at a time."""
    check_weights(weights)
    n_clusters = int(sizes.sum())
    for start in range(0, n_boot, chunk):
        size = min(chunk, n_boot - start)
        if weights == "poisson":
            yield rng.poisson(sizes, size=(size, len(sizes))).astype(float)
        else:
            yield rng.multinomial(n_clusters, sizes / n_clusters, size=size).astype(float)
