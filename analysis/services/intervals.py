"""The intervals beside the Wald one, by kind: each takes the question's arrays and its maximum-likelihood
fit and returns per-system bounds, or None when it cannot.

Extra interval kinds are entries in INTERVALS (with their description in analysis.results.INTERVAL_KINDS).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import bradley_terry as bt
from ..bradley_terry.labels import count_distinct
from ..results import Interval
from .judged import Judged, guarded, guarded_clustered
from .records import interval_of


def _participant_bootstrap(*, judged: Judged, main: bt.BTResult, rng: np.random.Generator) -> Interval | None:
    """Percentile intervals from resampling participants with all their judgments
    (the replicates `resample_participants` drew for every question at once)."""
    n_boot = judged.parameters["bootstrap"]
    if judged.participant_replicates is None:
        return None
    result = guarded(bt.percentile_intervals, judged.participant_replicates[:, : judged.n_items])
    if result is None:  # every replicate failed
        return None
    return interval_of("bootstrap", result, details={"n_boot": n_boot, "n_failed": int(result.n_failed)})


def _two_way_robust(*, judged: Judged, main: bt.BTResult, rng: np.random.Generator) -> Interval | None:
    """The judge x answer (vignette) cluster-robust sandwich, t with (fewer clusters - 1) df."""
    if not _two_way_possible(judged):
        return None
    result = _sandwich(judged, main, vignettes=judged.vignettes)
    if result is None:
        return None
    return interval_of(
        "two_way_robust", result, details={"df": result.df, **{f"n_{k}": v for k, v in result.clusters.items()}}
    )


def _judge_robust(*, judged: Judged, main: bt.BTResult, rng: np.random.Generator) -> Interval | None:
    """The judge-clustered sandwich (vcovCL(fit, cluster = ~ judge)), t with judges - 1 df: for these answers."""
    if count_distinct(judged.clusters) < 2:
        return None
    result = _sandwich(judged, main, vignettes=None)
    judged.memo.clear()  # the last sandwich: its scores (tens of MB) are not kept through the two-way bootstrap
    if result is None:
        return None
    return interval_of("judge_robust", result, details={"df": result.df, "n_judge": result.clusters["judge"]})


def _sandwich(judged: Judged, main: bt.BTResult, *, vignettes: np.ndarray | None) -> bt.RobustResult | None:
    """The cluster-robust sandwich of the fit over judges, and over vignettes too when they are given."""
    return guarded_clustered(
        bt.cluster_robust,
        judged,
        vignettes=vignettes,
        item_names=judged.names,
        fitted=main,
        memo=judged.memo,  # the judge-only and the two-way sandwich share the scores and the judge term
    )


def _two_way_bootstrap(*, judged: Judged, main: bt.BTResult, rng: np.random.Generator) -> Interval | None:
    """Judge x vignette bootstrap (inclusion-exclusion, as R's vcovBS), on a generator of its own."""
    n_boot = judged.parameters["bootstrap"]
    if n_boot < 1 or not _two_way_possible(judged):
        return None
    result = guarded_clustered(
        bt.two_way_bootstrap,
        judged,
        vignettes=judged.vignettes,
        # Its own stream for the vignettes and cells; the judges' part is the participant bootstrap's.
        rng=np.random.default_rng([judged.parameters["seed"], 2]),
        n_boot=n_boot,
        judge_estimates=judged.participant_replicates,
    )
    if result is None:
        return None
    failed = {f"n_failed_{k}": v for k, v in result.n_failed.items()}
    return interval_of("two_way_bootstrap", result, details={"n_boot": n_boot, "df": result.df, **failed})


def _two_way_possible(judged: Judged) -> bool:
    return count_distinct(judged.clusters) >= 2 and count_distinct(judged.vignettes) >= 2


# Interval kind -> its computation; the kind's label and question are in analysis.results.INTERVAL_KINDS.
INTERVALS: dict[str, Callable[..., Interval | None]] = {
    "bootstrap": _participant_bootstrap,
    "two_way_robust": _two_way_robust,
    "judge_robust": _judge_robust,
    "two_way_bootstrap": _two_way_bootstrap,
}
