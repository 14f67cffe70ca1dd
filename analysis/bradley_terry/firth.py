"""Bias-reduced (Firth 1993) fits on binomial rows, as BradleyTerry2's `BTm(..., br = TRUE)` (brglm).

For the logit link the adjusted score is

    U*(theta) = X^T (y - m pi + h (1/2 - pi)),

with h the diagonal of the hat matrix W^1/2 X (X^T W X)^-1 X^T W^1/2, W = m pi (1 - pi); its root
maximises log L + 1/2 log det I (the Jeffreys-prior penalty). The estimates are finite whenever
the comparison graph is connected, including under separation (an item that never wins). SEs
are those brglm reports: the inverse Fisher information with the original weights, at the
estimates.

The root is found as brglm finds it: with h held fixed, U* = 0 is the ML equation of pseudo-data
(y + h/2 successes out of m + h), a concave problem that `fit_batch` solves; h is then updated
at the new estimates until U* vanishes. (Fisher scoring on U* itself overshoots: near the root it
can step twice too far and cycle, e.g. on a single binomial.)
"""

from __future__ import annotations

import numpy as np

from .general import BatchFit, _linear_predictor, _scatter, _score_and_information, fit_batch
from .grouping import Grouped


def fit_batch_firth(
    grouped: Grouped,
    n_items: int,
    *,
    reference: int,
    fitted: np.ndarray,
    wins: np.ndarray | None = None,
    totals: np.ndarray | None = None,
    max_iter: int = 200,
    tol: float = 1e-10,
) -> BatchFit:
    """Bias-reduced fits for a batch of (wins, totals) over the same rows.

    `fitted` masks the items with a free ability (items outside it stay at 0, as the reference
    does); a member has converged when every adjusted-score entry is below `tol`.
    """
    wins = grouped.wins[None, :] if wins is None else np.atleast_2d(wins)
    totals = grouped.totals[None, :] if totals is None else np.atleast_2d(totals)
    size = n_items + grouped.extra.shape[1]
    mask = np.ones(size, bool)
    mask[:n_items] = fitted
    mask[reference] = False
    free = np.flatnonzero(mask)
    design = _design(grouped, n_items)[:, free]  # rows x free: +1 for a, -1 for b, then the extra columns
    theta = np.zeros((wins.shape[0], size))
    active = np.ones(wins.shape[0], bool)
    iterations = 0
    while iterations < max_iter:
        idx = np.flatnonzero(active)
        adjusted, hats = _adjusted_score(
            theta[idx], grouped=grouped, design=design, free=free, wins=wins[idx], totals=totals[idx], n_items=n_items
        )
        active[idx[np.abs(adjusted).max(axis=1) <= tol]] = False
        if not active.any():
            break
        iterations += 1
        idx, hats = np.flatnonzero(active), hats[active[idx]]
        pseudo = fit_batch(
            grouped,
            n_items,
            reference=reference,
            wins=wins[idx] + 0.5 * hats,
            totals=totals[idx] + hats,
            start=theta[idx],
            estimable=fitted,
            tol=1e-20,  # stop on the Newton decrement's rounding floor: the outer loop needs the exact root
            max_iter=50,
        )
        theta[idx] = pseudo.theta
    _, info = _score_and_information(
        theta, a=grouped.a, b=grouped.b, extra=grouped.extra, wins=wins, totals=totals, n_items=n_items
    )
    finite = np.isfinite(theta).all(axis=1)
    return BatchFit(theta, info[:, free[:, None], free], ~active & finite, iterations, free)


def _design(grouped: Grouped, n_items: int) -> np.ndarray:
    rows = np.arange(len(grouped.a))
    design = np.zeros((len(rows), n_items + grouped.extra.shape[1]))
    design[rows, grouped.a] = 1.0
    design[rows, grouped.b] = -1.0
    design[:, n_items:] = grouped.extra
    return design


def _adjusted_score(
    theta: np.ndarray,
    *,
    grouped: Grouped,
    design: np.ndarray,
    free: np.ndarray,
    wins: np.ndarray,
    totals: np.ndarray,
    n_items: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Adjusted score over the free columns and the hat values of the rows, per batch member."""
    eta = _linear_predictor(theta, grouped.a, grouped.b, grouped.extra, n_items)
    prob = 1.0 / (1.0 + np.exp(-eta))
    weight = totals * prob * (1.0 - prob)
    hats = np.empty_like(weight)
    for r, member in enumerate(weight):  # a BLAS product per member: einsum over rows is far slower
        inverse = np.linalg.pinv((design.T * member) @ design, hermitian=True)
        hats[r] = member * np.einsum("gi,gi->g", design @ inverse, design)
    residual = wins - totals * prob + hats * (0.5 - prob)
    score = np.empty((len(theta), n_items + grouped.extra.shape[1]))
    score[:, :n_items] = _scatter(grouped.a, residual, n_items) - _scatter(grouped.b, residual, n_items)
    score[:, n_items:] = residual @ grouped.extra
    return score[:, free], hats
