"""PPI++ (power-tuned prediction-powered inference) for a logistic regression without intercept: Bradley-Terry.

Pure numpy, no Django. Follows Angelopoulos, Duchi and Zrnic, "PPI++: Efficient prediction-powered inference"
(2023) and their package ppi-python (``ppi_py.ppi_logistic_ci``), which the tests use as the oracle: the same
rectified loss, the Hessian pooled over labelled and unlabelled rows, and the same power-tuning of lambda.

- labelled rows (X, Y, Yhat): human judgments, Y = 1 when the cell's answer_a won, Yhat = the LLM judge's
  share of picks for answer_a on that cell (its orders and samples averaged);
- unlabelled rows (X_u, Yhat_u): every cell the judge judged, once.
The loss is  (1/n) sum l(X, Y) + lam * [ (1/N) sum l(X_u, Yhat_u) - (1/n) sum l(X, Yhat) ]  with l the logistic
loss; lam = 0 gives the human-only estimate, and lam is chosen to minimise the interval width (clipped to [0, 1]).
A Bradley-Terry comparison of items i and j is the row e_i - e_j with the reference item's column dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.stats import norm


@dataclass(frozen=True)
class PPIResult:
    estimate: np.ndarray
    se: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    lam: float
    n: int  # labelled rows
    N: int  # unlabelled rows


def design(first: np.ndarray, second: np.ndarray, n_items: int, reference: int) -> np.ndarray:
    """Rows e_first - e_second without the reference's column."""
    rows = np.zeros((len(first), n_items))
    rows[np.arange(len(first)), first] += 1.0
    rows[np.arange(len(first)), second] -= 1.0
    return np.delete(rows, reference, axis=1)


def point_estimate(X, Y, Yhat, Xu, Yhat_u, *, lam: float, max_iter: int = 100, tol: float = 1e-10) -> np.ndarray:
    """Newton's method on the (convex for lam in [0, 1]) rectified logistic loss."""
    n, N = len(X), len(Xu)
    theta = np.zeros(X.shape[1])
    for _ in range(max_iter):
        p, pu = expit(X @ theta), expit(Xu @ theta)
        grad = X.T @ (p - Y) / n + lam * (Xu.T @ (pu - Yhat_u) / N - X.T @ (p - Yhat) / n)
        hessian = (1 - lam) * (X.T * (p * (1 - p))) @ X / n + lam * (Xu.T * (pu * (1 - pu))) @ Xu / N
        step = np.linalg.solve(hessian, grad)
        longest = np.max(np.abs(step))
        if longest > 5:  # damped: far from the optimum a full step can overshoot
            step *= 5 / longest
        theta -= step
        if longest < tol:
            break
    return theta


def _stats(theta, X, Y, Yhat, Xu, Yhat_u, *, pooled: bool = True):
    p, pu = expit(X @ theta), expit(Xu @ theta)
    grads, grads_hat, grads_hat_u = X * (p - Y)[:, None], X * (p - Yhat)[:, None], Xu * (pu - Yhat_u)[:, None]
    if pooled:
        hessian = ((X.T * (p * (1 - p))) @ X + (Xu.T * (pu * (1 - pu))) @ Xu) / (len(X) + len(Xu))
    else:
        hessian = (X.T * (p * (1 - p))) @ X / len(X)
    return grads, grads_hat, grads_hat_u, np.linalg.inv(hessian)


def tuned_lambda(grads, grads_hat, grads_hat_u, inv_hessian) -> float:
    """The lambda that minimises the summed variance (ppi_py's _calc_lam_glm, "overall" mode), clipped."""
    n, N = len(grads), len(grads_hat_u)
    g, gh = grads - grads.mean(axis=0), grads_hat - grads_hat.mean(axis=0)
    cov_grads = (g.T @ gh + gh.T @ g) / n
    var_hat = np.atleast_2d(np.cov(np.concatenate([grads_hat, grads_hat_u]).T))
    num = np.trace(inv_hessian @ cov_grads @ inv_hessian)
    denom = 2 * (1 + n / N) * np.trace(inv_hessian @ var_hat @ inv_hessian)
    return float(np.clip(num / denom, 0, 1)) if denom > 0 else 0.0


def ppi_logistic(X, Y, Yhat, Xu, Yhat_u, *, alpha: float = 0.05, lam: float | None = None) -> PPIResult:
    """PPI++ estimate and (1 - alpha) Wald interval; lam=None tunes it (as ppi_py does)."""
    X, Y, Yhat, Xu, Yhat_u = (np.asarray(a, float) for a in (X, Y, Yhat, Xu, Yhat_u))
    if lam is None:
        theta = point_estimate(X, Y, Yhat, Xu, Yhat_u, lam=1.0)
        lam = tuned_lambda(*_stats(theta, X, Y, Yhat, Xu, Yhat_u))
    theta = point_estimate(X, Y, Yhat, Xu, Yhat_u, lam=lam)
    grads, grads_hat, grads_hat_u, inv_h = _stats(theta, X, Y, Yhat, Xu, Yhat_u)
    n, N, d = len(X), len(Xu), X.shape[1]
    var_u = np.atleast_2d(np.cov((lam * grads_hat_u).T)).reshape(d, d)
    var = np.atleast_2d(np.cov((grads - lam * grads_hat).T)).reshape(d, d)
    sigma = inv_h @ (n / N * var_u + var) @ inv_h
    return _interval(theta, np.sqrt(np.diag(sigma) / n), alpha, lam, n, N)


def classical_logistic(X, Y, *, alpha: float = 0.05) -> PPIResult:
    """The human-only estimate with its sandwich interval (what PPI is compared against)."""
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    theta = point_estimate(X, Y, Y, X, Y, lam=0.0)
    grads, _gh, _ghu, inv_h = _stats(theta, X, Y, Y, X, Y, pooled=False)
    sigma = inv_h @ np.atleast_2d(np.cov(grads.T)) @ inv_h
    return _interval(theta, np.sqrt(np.diag(sigma) / len(X)), alpha, 0.0, len(X), 0)


def _interval(theta, se, alpha, lam, n, N) -> PPIResult:
    z = norm.ppf(1 - alpha / 2)
    return PPIResult(theta, se, theta - z * se, theta + z * se, float(lam), n, N)


def worth_human_judgments(n_human: int, human_width: float, ppi_width: float) -> float:
    """The human sample size whose interval would be as narrow as PPI's (width shrinks as 1 / sqrt(n))."""
    return n_human * (human_width / ppi_width) ** 2 if ppi_width > 0 else float("nan")
