"""One question's valid judgments as arrays, and the fit every stage of `fit_question` starts from."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from .. import bradley_terry as bt


@dataclass(frozen=True)
class Judged:
    """One question's valid judgments as arrays over the systems (item order), and how to fit them."""

    winners: np.ndarray
    losers: np.ndarray
    first: np.ndarray  # the item shown first
    clusters: np.ndarray  # the participant who made each judgment
    vignettes: np.ndarray
    style: np.ndarray  # word-count difference, winner minus loser
    names: list[str]
    reference: int
    parameters: dict
    # Participant-bootstrap replicate estimates (see `resample_participants`), or None when participants
    # cannot be resampled.
    participant_replicates: np.ndarray | None = None
    # What the question's intervals share (see bt.cluster_robust's memo).
    memo: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def n_items(self) -> int:
        return len(self.names)

    def first_in_estimates(self) -> np.ndarray | None:
        return self.first if self.parameters["order_effect"] else None


def fit_judged(judged: Judged, *, first: np.ndarray | None = None, covariates: np.ndarray | None = None) -> bt.BTResult:
    return bt.fit(
        judged.winners,
        judged.losers,
        judged.n_items,
        reference=judged.reference,
        first=first,
        covariates=covariates,
        item_names=judged.names,
    )


def guarded(function, *args, **kwargs):
    """A diagnostic that cannot be computed on this data is None, never a failed run."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return function(*args, **kwargs)
    except (ValueError, ZeroDivisionError, IndexError, np.linalg.LinAlgError, FloatingPointError):
        return None


def guarded_clustered(function, judged: Judged, *, vignettes: np.ndarray | None, **kwargs):
    """`function` (a bt computation over judges, and over vignettes when they are given: headline_test,
    cluster_robust, two_way_bootstrap, by_set) on the question's judgments with the order effect as its estimates
    have it, by `guarded`: None when it cannot be computed."""
    return guarded(
        function,
        judged.winners,
        judged.losers,
        judged.n_items,
        reference=judged.reference,
        judges=judged.clusters,
        vignettes=vignettes,
        first=judged.first_in_estimates(),
        **kwargs,
    )
