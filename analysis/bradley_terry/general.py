"""Newton-Raphson with step halving on binomial rows, for a batch of fits at once.

The general path: any model (order effect, covariates), and every bootstrap or simulated refit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .grouping import Grouped

# Predicted log-likelihood gain below which a Newton step is taken without checking it.
SAFE_GAIN = 1e-3


@dataclass(frozen=True)
class BatchFit:
    """Many fits sharing one set of binomial rows (bootstrap replicates, simulations)."""

    theta: np.ndarray  # (batch, n_items + p), reference column 0
    information: np.ndarray  # (batch, free, free) at theta
    converged: np.ndarray  # (batch,)
    iterations: int
    free: np.ndarray  # indices of theta that were estimated


def _scatter(index: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """Per-batch bincount: out[r, k] = sum of values[r, g] where index[g] == k."""
    batch = values.shape[0]
    flat = (np.arange(batch)[:, None] * size + index[None, :]).ravel()
    return np.bincount(flat, values.ravel(), minlength=batch * size).reshape(batch, size)


def _linear_predictor(theta: np.ndarray, a, b, extra, n_items) -> np.ndarray:
    return theta[:, a] - theta[:, b] + theta[:, n_items:] @ extra.T


def _log_likelihood(eta: np.ndarray, wins: np.ndarray, totals: np.ndarray) -> np.ndarray:
    return (wins * eta - totals * np.logaddexp(0.0, eta)).sum(axis=1)


def _score_and_information(
    theta: np.ndarray,
    *,
    a: np.ndarray,
    b: np.ndarray,
    extra: np.ndarray,
    wins: np.ndarray,
    totals: np.ndarray,
    n_items: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient and Fisher information (= observed for the logit link) over all columns."""
    eta = _linear_predictor(theta, a, b, extra, n_items)
    prob = 1.0 / (1.0 + np.exp(-eta))
    residual = wins - totals * prob
    weight = totals * prob * (1.0 - prob)
    batch, size = theta.shape
    score = np.empty((batch, size))
    score[:, :n_items] = _scatter(a, residual, n_items) - _scatter(b, residual, n_items)
    score[:, n_items:] = residual @ extra
    info = np.zeros((batch, size, size))
    pair = _scatter(a * n_items + b, weight, n_items * n_items).reshape(batch, n_items, n_items)
    item_block = -(pair + pair.transpose(0, 2, 1))
    diag = np.arange(n_items)
    item_block[:, diag, diag] = _scatter(a, weight, n_items) + _scatter(b, weight, n_items)
    info[:, :n_items, :n_items] = item_block
    for c in range(extra.shape[1]):
        weighted = weight * extra[:, c]
        cross = _scatter(a, weighted, n_items) - _scatter(b, weighted, n_items)
        info[:, :n_items, n_items + c] = cross
        info[:, n_items + c, :n_items] = cross
    info[:, n_items:, n_items:] = np.einsum("rg,gi,gj->rij", weight, extra, extra)
    return score, info


def fit_batch(
    grouped: Grouped,
    n_items: int,
    *,
    reference: int,
    wins: np.ndarray | None = None,
    totals: np.ndarray | None = None,
    start: np.ndarray | None = None,
    estimable: np.ndarray | None = None,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> BatchFit:
    """Newton-Raphson with step halving on a batch of (wins, totals) over the same rows.

    Stops each member when half its Newton decrement (the predicted log-likelihood gain) is
    below `tol`; the last step is still applied, so the estimate is accurate well past that.
    Items outside `estimable` (a mask over items) stay at 0 with the reference.
    """
    wins = grouped.wins[None, :] if wins is None else np.atleast_2d(wins)
    totals = grouped.totals[None, :] if totals is None else np.atleast_2d(totals)
    batch, size = wins.shape[0], n_items + grouped.extra.shape[1]
    mask = np.ones(size, bool)
    if estimable is not None:
        mask[:n_items] = estimable
    mask[reference] = False
    free = np.flatnonzero(mask)
    theta = np.zeros((batch, size)) if start is None else np.array(np.broadcast_to(start, (batch, size)))
    rows = {"a": grouped.a, "b": grouped.b, "extra": grouped.extra}
    active = np.ones(batch, bool)
    iterations = 0
    while active.any() and iterations < max_iter:
        iterations += 1
        idx = np.flatnonzero(active)
        score, info = _score_and_information(theta[idx], **rows, wins=wins[idx], totals=totals[idx], n_items=n_items)
        step = _solve(info[:, free[:, None], free], score[:, free])
        gain = 0.5 * np.einsum("ri,ri->r", score[:, free], step)
        theta[np.ix_(idx, free)] = _halved(
            theta[idx], step, gain, free=free, grouped=grouped, wins=wins[idx], totals=totals[idx], n_items=n_items
        )
        active[idx[gain <= tol]] = False
    _, info = _score_and_information(theta, **rows, wins=wins, totals=totals, n_items=n_items)
    finite = np.isfinite(theta).all(axis=1)
    return BatchFit(theta, info[:, free[:, None], free], ~active & finite, iterations, free)


def _solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(matrix, rhs[..., None])[..., 0]
    except np.linalg.LinAlgError:  # a singular member: least squares keeps the rest going
        return np.einsum("rij,rj->ri", np.linalg.pinv(matrix), rhs)


def _halved(
    theta: np.ndarray,
    step: np.ndarray,
    gain: np.ndarray,
    *,
    free: np.ndarray,
    grouped: Grouped,
    wins: np.ndarray,
    totals: np.ndarray,
    n_items: int,
    tries: int = 30,
) -> np.ndarray:
    """theta + step, halving the step for members whose log-likelihood would drop.

    Members whose predicted gain is tiny are in Newton's quadratic zone, where the full step
    of a concave log-likelihood is safe, so only the others pay for the check."""
    moved = theta[:, free] + step
    check = np.flatnonzero(gain > SAFE_GAIN)
    if check.size == 0:
        return moved
    theta, step, wins, totals = theta[check], step[check], wins[check], totals[check]
    before = _log_likelihood(_linear_predictor(theta, grouped.a, grouped.b, grouped.extra, n_items), wins, totals)
    scale = np.ones(len(theta))
    for _ in range(tries):
        trial = theta.copy()
        trial[:, free] += scale[:, None] * step
        after = _log_likelihood(_linear_predictor(trial, grouped.a, grouped.b, grouped.extra, n_items), wins, totals)
        worse = ~(after >= before - 1e-12 * np.abs(before))
        if not worse.any():
            break
        scale[worse] *= 0.5
    moved[check] = trial[:, free]
    return moved


def _deviance(eta: np.ndarray, wins: np.ndarray, totals: np.ndarray) -> float:
    """Binomial deviance of the grouped rows against the saturated model."""
    fitted = totals / (1.0 + np.exp(-eta))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(wins > 0, wins * np.log(wins / fitted), 0.0)
        terms += np.where(
            totals - wins > 0,
            (totals - wins) * np.log((totals - wins) / (totals - fitted)),
            0.0,
        )
    return float(2.0 * terms.sum())
