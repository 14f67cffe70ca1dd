"""Bradley-Terry paired-comparison models fitted by maximum likelihood.

Pure numpy/scipy: arrays in, dataclasses out, no Django. The model is

    logit P(i beats j) = lambda_i - lambda_j + delta * z + beta . x

with lambda_reference = 0, z = +1 when the winner-side item was shown first and -1 when the
loser was (BradleyTerry2's home-advantage coding), and x the per-comparison covariate
differences (winner minus loser). It is a binomial GLM without intercept, as in R's BTm.

Comparisons are first collapsed into binomial rows (unordered pair, z, x) holding the wins of
the lower-numbered item and the total, so a million comparisons among 100 items cost a few
thousand rows. Newton-Raphson runs on a batch of count vectors at once, which is what makes
the clustered bootstrap and the power simulations cheap.

Plain fits (no order effect, no covariates) take a dense shortcut: one bincount into the
n x n win matrix, then Newton on the abilities in matrix form (`_newton_dense`), O(n^2) per
iteration whatever the number of comparisons. Its outputs mean exactly what the general
path's do; tests hold the two paths to 1e-9 of each other.

Modules: results (what a fit returns), grouping (binomial rows), general (batched Newton on
rows), dense (the shortcut), problems (input checks, separation and connectivity), fitting
(fit itself), resampling/ (the clustered bootstraps, a module per design), headline_test (the reported test), ranks (the simultaneous band and rank sets from it), diagnostics (Holm, reliability, simulation).
"""

from .dense import WIDE
from .diagnostics import (
    SplitHalfResult,
    centred_abilities,
    first_position_rate,
    holm,
    separation_reliability,
    simulate,
    split_half,
    split_half_reliability,
    split_halves,
)
from .fitting import DIVERGED, fit
from .general import SAFE_GAIN, BatchFit, fit_batch
from .grouping import Grouped, count_table, group_comparisons, group_table, order_signs
from .headline_test import ContrastTest, HeadlineTest, headline_test, why_no_test
from .heterogeneity import HeterogeneityResult, SystemHeterogeneity, vignette_heterogeneity
from .problems import find_problems
from .ranks import RankClaims, rank_claims
from .resampling import (
    MEMORY_BUDGET,
    WEIGHTS,
    ClusterTables,
    DenseTable,
    RefitBasis,
    bootstrap,
    chunk_size,
    cluster_tables,
    dense_table,
    item_wins_and_losses,
    percentile_intervals,
    prepare_dense_table,
    prepare_tables,
    replicate_weights,
    shared_resample,
)
from .results import Z95, BootstrapResult, BTResult, Effect, wald_arrays
from .robust import (
    ANSWER_CLUSTERINGS,
    RobustResult,
    cluster_robust,
    multiway_meat,
    score_contributions,
    shared_answer_meat,
)
from .simulation import SimulatedJudgments, first_wins_probability, simulate_judgments
from .two_way import SCHEMES, TwoWayBootstrapResult, two_way_bootstrap

__all__ = [
    "ANSWER_CLUSTERINGS",
    "DIVERGED",
    "MEMORY_BUDGET",
    "SAFE_GAIN",
    "SCHEMES",
    "WEIGHTS",
    "WIDE",
    "Z95",
    "BTResult",
    "BatchFit",
    "BootstrapResult",
    "ClusterTables",
    "ContrastTest",
    "DenseTable",
    "Effect",
    "Grouped",
    "HeadlineTest",
    "HeterogeneityResult",
    "RankClaims",
    "RefitBasis",
    "RobustResult",
    "SimulatedJudgments",
    "SplitHalfResult",
    "SystemHeterogeneity",
    "TwoWayBootstrapResult",
    "bootstrap",
    "centred_abilities",
    "chunk_size",
    "cluster_robust",
    "cluster_tables",
    "count_table",
    "dense_table",
    "find_problems",
    "first_position_rate",
    "first_wins_probability",
    "fit",
    "fit_batch",
    "group_comparisons",
    "group_table",
    "headline_test",
    "holm",
    "item_wins_and_losses",
    "multiway_meat",
    "order_signs",
    "percentile_intervals",
    "prepare_dense_table",
    "prepare_tables",
    "rank_claims",
    "replicate_weights",
    "score_contributions",
    "separation_reliability",
    "shared_answer_meat",
    "shared_resample",
    "simulate",
    "simulate_judgments",
    "split_half",
    "split_half_reliability",
    "split_halves",
    "two_way_bootstrap",
    "vignette_heterogeneity",
    "wald_arrays",
    "why_no_test",
]
