"""The dense shortcut for plain fits (no order effect, no covariates): Newton on the n x n win matrix."""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import lapack

from .general import SAFE_GAIN, BatchFit, _solve
from .problems import _check_indices

# Spread of abilities beyond which the dense path avoids exp(theta - max theta) (underflow).
WIDE = 500.0


def _win_matrix(winners, losers, n_items, counts, chunk=1 << 18) -> np.ndarray:
    """wins[i, j] = how often i beat j: bincount of winner * n + loser, checking the indices.

    Done in chunks so that each piece of the inputs is read from memory once: its keys, its
    range check and its bincount all find it in cache."""
    size = n_items * n_items
    wins = np.zeros(size)
    key = np.empty(min(len(winners), chunk), np.int64)
    for start in range(0, len(winners), chunk):
        piece = slice(start, start + chunk)
        winner, loser = winners[piece], losers[piece]
        part = key[: len(winner)]
        np.multiply(winner, n_items, out=part)
        part += loser
        _check_indices(winner, loser, n_items)
        wins += np.bincount(part, None if counts is None else counts[piece], minlength=size)
    return wins.reshape(n_items, n_items)


def _dense_fit_statistics(theta: np.ndarray, wins_matrix: np.ndarray) -> tuple[float, float, float]:
    """Log-likelihood, deviance and null deviance of the binomial rows (one per compared pair)
    from the win matrix: deviance = 2 (saturated - fitted log-likelihood)."""
    pair_totals = wins_matrix + wins_matrix.T
    log_likelihood = _dense_log_likelihood(theta, wins_matrix.sum(axis=1), pair_totals)
    won = wins_matrix > 0  # so pair_totals > 0 too
    share = np.divide(wins_matrix, pair_totals, out=np.ones_like(wins_matrix), where=won)
    saturated = float(np.vdot(wins_matrix, np.log(share)))
    null = -math.log(2.0) * float(wins_matrix.sum())
    # As differences of sums they can come out a rounding error below 0; nan stays nan.
    deviance, null_deviance = np.maximum(0.0, 2.0 * (saturated - np.array([log_likelihood, null])))
    return log_likelihood, float(deviance), float(null_deviance)


def _dense_terms(theta, item_wins, pair_totals, fixed):
    """Score wins_i - sum_j N_ij p_ij and information diag(sum_j V_ij) - V, V_ij = N_ij p_ij p_ji,
    over all items; rows and columns of `fixed` items are those of the identity (score 0).

    p_ij = s_i / (s_i + s_j) with s = exp(theta - max theta), so only n exponentials."""
    if np.ptp(theta) < WIDE:
        strength = np.exp(theta - theta.max())
        sums = strength[:, None] + strength[None, :]
        lose = np.divide(strength[None, :], sums)  # p_ji = 1 - p_ij
        expected = np.divide(-strength[:, None], sums)  # -p_ij, times N_ij below
    else:  # abilities far apart: the overflow-safe logistic form
        with np.errstate(over="ignore"):
            lose = 1.0 / (1.0 + np.exp(theta[:, None] - theta[None, :]))
        expected = -lose.T
    expected *= pair_totals
    score = item_wins + expected.sum(axis=1)
    information = np.multiply(expected, lose, out=expected)  # -V
    information.flat[:: len(theta) + 1] = -information.sum(axis=1)
    score[fixed] = 0.0
    information[fixed, :] = 0.0
    information[:, fixed] = 0.0
    information[fixed, fixed] = 1.0
    return score, information


def _dense_log_likelihood(theta: np.ndarray, item_wins: np.ndarray, pair_totals: np.ndarray) -> float:
    """sum_ij W_ij log p_ij = wins . theta - 1/2 sum_ij N_ij log(e^theta_i + e^theta_j)."""
    if np.ptp(theta) < WIDE:
        shift = theta.max()
        strength = np.exp(theta - shift)
        log_sums = np.log(strength[:, None] + strength[None, :])
        log_sums += shift
    else:
        log_sums = np.logaddexp.outer(theta, theta)
    return float(item_wins @ theta - 0.5 * np.vdot(pair_totals, log_sums))


def _dense_start(item_wins, item_losses, estimable, reference) -> np.ndarray:
    """Smoothed log(wins / losses): within about 0.3 of the estimates for a balanced design,
    from where Newton needs about four steps (from 0, about six)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(estimable, np.log((item_wins + 0.5) / (item_losses + 0.5)), 0.0)
    return theta - theta[reference]


def _newton_dense(wins_matrix, estimable, reference, max_iter, tol) -> BatchFit:
    """`fit_batch` for one fit on the win matrix, with the same stopping rule.

    A step predicted to gain more than SAFE_GAIN is checked as in `_halved`, except that the
    check is skipped when the log-likelihood still rises at the new point along the step
    (then, being concave along the step, it cannot have dropped); the score there is needed
    for the next step anyway, so most fits never evaluate the log-likelihood."""
    pair_totals = wins_matrix + wins_matrix.T
    item_wins, item_losses = wins_matrix.sum(axis=1), wins_matrix.sum(axis=0)
    mask = estimable.copy()
    mask[reference] = False
    free, fixed = np.flatnonzero(mask), np.flatnonzero(~mask)
    theta = np.where(mask, _dense_start(item_wins, item_losses, estimable, reference), 0.0)
    score, information = _dense_terms(theta, item_wins, pair_totals, fixed)
    converged, iterations = False, 0
    while not converged and iterations < max_iter:
        iterations += 1
        step = _solve_spd(information, score)
        gain = 0.5 * (score @ step)
        trial = theta + step
        new_score, new_information = _dense_terms(trial, item_wins, pair_totals, fixed)
        if gain > SAFE_GAIN and not new_score @ step >= 0.0:
            before = _dense_log_likelihood(theta, item_wins, pair_totals)
            scale, after = 1.0, _dense_log_likelihood(trial, item_wins, pair_totals)
            for _ in range(29):
                if after >= before - 1e-12 * abs(before):
                    break
                scale *= 0.5
                trial = theta + scale * step
                after = _dense_log_likelihood(trial, item_wins, pair_totals)
            if scale != 1.0:
                new_score, new_information = _dense_terms(trial, item_wins, pair_totals, fixed)
        theta, score, information = trial, new_score, new_information
        converged = bool(gain <= tol)
    finite = bool(np.isfinite(theta).all())
    information = information[free][:, free]  # two 1-d takes: far cheaper than np.ix_ here
    return BatchFit(theta[None], information[None], np.array([converged and finite]), iterations, free)


def _solve_spd(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Cholesky solve; a matrix that is not positive definite goes to `_solve`'s fallbacks."""
    factor, info = lapack.dpotrf(matrix, lower=True, clean=False)
    if info == 0:
        solution, info = lapack.dpotrs(factor, rhs, lower=True)
        if info == 0:
            return solution
    return _solve(matrix[None], rhs[None])[0]
