"""Resampling by participant (cluster), one module per design.

- tables: what every design shares, per-cluster count tables on the binomial rows, the weight kinds,
  the batched refit of weighted tables (warm-started at the full-data fit) and percentile intervals;
- participants: the participant-clustered bootstrap (`bootstrap`, `resample`), drawn chunk by chunk;
- patterns: identical clusters collapsed and resampled as one pattern (large studies);
- shared: one set of draws shared by several tables over the same clusters (a study's questions),
  on dense count tables.

The two-way (judge x answer) bootstrap builds on these (../two_way.py), and so do split halves
(../diagnostics.py).
"""

from .participants import MEMORY_BUDGET, bootstrap, chunk_size, replicate_weights, resample
from .shared import DenseTable, dense_table, prepare_dense_table, shared_resample
from .tables import (
    WEIGHTS,
    ClusterTables,
    RefitBasis,
    cluster_tables,
    item_wins_and_losses,
    percentile_intervals,
    prepare_tables,
    refit_replicates,
    refit_weighted,
)

__all__ = [
    "MEMORY_BUDGET",
    "WEIGHTS",
    "ClusterTables",
    "DenseTable",
    "RefitBasis",
    "bootstrap",
    "chunk_size",
    "cluster_tables",
    "dense_table",
    "item_wins_and_losses",
    "percentile_intervals",
    "prepare_dense_table",
    "prepare_tables",
    "refit_replicates",
    "refit_weighted",
    "replicate_weights",
    "resample",
    "shared_resample",
]
