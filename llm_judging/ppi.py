"""PPI++ (power-tuned prediction-powered inference) for a logistic regression without intercept: Bradley-Terry.

Pure numpy, no Django. Follows Angelopoulos, Duchi and Zrnic, "PPI++: Efficient prediction-powered inference"
(2023) and their package ppi-python (``ppi_py.ppi_logistic_ci``), which tests/llm_judging/test_ppi.py matches to
1e-6 (tests/fixtures/ppi/): the same rectified loss, the Hessian pooled over labelled and unlabelled rows, and the
same two-pass power tuning of lambda (fit at lambda = 1, tune, refit, tune again at that estimate, refit).

- labelled rows (X, Y, Yhat): human judgments, Y = 1 when the cell's answer_a won, Yhat = the LLM judge's
  share of picks for answer_a on that cell (its orders and samples averaged);
- unlabelled rows (X_u, Yhat_u): every cell the judge judged, once.
The loss is  (1/n) sum l(X, Y) + lam * [ (1/N) sum l(X_u, Yhat_u) - (1/n) sum l(X, Yhat) ]  with l the logistic
loss; lam = 0 gives the human-only estimate, and lam is chosen to minimise the interval width (clipped to [0, 1]).
A Bradley-Terry comparison of items i and j is the row e_i - e_j with the reference item's column dropped.

Clustering (``clusters``, ``clusters_u``). ppi-python treats every row as independent. In a judging study the
eight humans on one cell share its answers, and the cells of one vignette share that vignette's answers, so
their picks are correlated and the independent-rows interval is too narrow (docs/statistics-ppi.md measures
it). Given a cluster label per labelled and per unlabelled row (the vignette), lambda is tuned and the
variance computed from cluster sums of the PPI estimating equation (a cluster-robust sandwich, CR1), with
t(G - 1) quantiles, G the clusters of that estimating equation: those holding human rows and, when lambda > 0,
those holding only the judge's rows too (their sums enter the sandwich; counting only the humans' vignettes
gave too few df: coverage 1.000 with 3 human vignettes and the judge on 27 more). When the judge covers exactly the humans' cells, each
once, with equal humans per cell, the lambda term is zero cluster by cluster: the tuned lambda is 0 and the
estimate and interval are the human-only ones (no saving, as it should be).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from scipy.stats import norm, t


@dataclass(frozen=True)
class PPIResult:
    estimate: np.ndarray
    se: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    lam: float
    n: int  # labelled rows
    N: int  # unlabelled rows
    clusters: int | None = None  # clusters of the estimating equation (None: rows independent)
    df: float | None = None  # t degrees of freedom of the interval (None: normal)


def design(first: np.ndarray, second: np.ndarray, n_items: int, reference: int) -> np.ndarray:
    """Rows e_first - e_second without the reference's column."""
    rows = np.zeros((len(first), n_items))
    rows[np.arange(len(first)), first] += 1.0
    rows[np.arange(len(first)), second] -= 1.0
    return np.delete(rows, reference, axis=1)


def point_estimate(X, Y, Yhat, Xu, Yhat_u, *, lam: float, max_iter: int = 100, tol: float = 1e-12) -> np.ndarray:
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


@dataclass(frozen=True)
class _Clusters:
    """Labelled and unlabelled rows mapped to shared cluster indices."""

    labelled: np.ndarray
    unlabelled: np.ndarray
    count: int  # all clusters
    with_humans: int  # clusters holding labelled rows

    @classmethod
    def of(cls, clusters, clusters_u) -> _Clusters:
        labels, index = np.unique(np.concatenate([np.asarray(clusters), np.asarray(clusters_u)]), return_inverse=True)
        labelled, unlabelled = index[: len(clusters)], index[len(clusters) :]
        return cls(labelled, unlabelled, len(labels), len(np.unique(labelled)))

    def sums(self, values, rows) -> np.ndarray:
        out = np.zeros((self.count, values.shape[1]))
        np.add.at(out, rows, values)
        return out


def _cluster_parts(theta, X, Y, Yhat, Xu, Yhat_u, groups: _Clusters):
    """Per-cluster parts of the estimating equation a_c - lam * b_c, and the inverse pooled Hessian."""
    grads, grads_hat, grads_hat_u, inv_h = _stats(theta, X, Y, Yhat, Xu, Yhat_u)
    n, N = len(X), len(Xu)
    a = groups.sums(grads, groups.labelled) / n
    b = groups.sums(grads_hat, groups.labelled) / n - groups.sums(grads_hat_u, groups.unlabelled) / N
    return a, b, inv_h


def clustered_lambda(a, b, inv_hessian) -> float:
    """The lambda minimising trace(H^-1 sum_c (a_c - lam b_c)(a_c - lam b_c)' H^-1), clipped to [0, 1]."""
    ha, hb = a @ inv_hessian, b @ inv_hessian
    denom = float(np.sum(hb * hb))
    if denom <= 1e-20 * float(np.sum(ha * ha)):  # the lambda term cancels (rounding left): lambda changes nothing
        return 0.0
    return float(np.clip(np.sum(ha * hb) / denom, 0, 1))


def _two_pass(fit, tune) -> tuple[float, np.ndarray]:
    """ppi-python's order: fit at lam 1, tune, refit, tune again at that estimate, refit."""
    lam = tune(fit(1.0))
    lam = tune(fit(lam))
    return lam, fit(lam)


def ppi_logistic(X, Y, Yhat, Xu, Yhat_u, *, alpha=0.05, lam=None, clusters=None, clusters_u=None) -> PPIResult:
    """PPI++ estimate and (1 - alpha) interval; lam=None tunes it as ppi_py does; clusters make it cluster-robust."""
    X, Y, Yhat, Xu, Yhat_u = (np.asarray(a, float) for a in (X, Y, Yhat, Xu, Yhat_u))
    n, N, d = len(X), len(Xu), X.shape[1]

    def fit(lam_):
        return point_estimate(X, Y, Yhat, Xu, Yhat_u, lam=lam_)

    if clusters is not None:
        groups = _Clusters.of(clusters, clusters_u)
        if lam is None:
            lam, theta = _two_pass(
                fit, lambda th: clustered_lambda(*_cluster_parts(th, X, Y, Yhat, Xu, Yhat_u, groups))
            )
        else:
            theta = fit(lam)
        return _clustered_interval(theta, lam, X, Y, Yhat, Xu, Yhat_u, groups, alpha)
    if lam is None:
        lam, theta = _two_pass(fit, lambda th: tuned_lambda(*_stats(th, X, Y, Yhat, Xu, Yhat_u)))
    else:
        theta = fit(lam)
    grads, grads_hat, grads_hat_u, inv_h = _stats(theta, X, Y, Yhat, Xu, Yhat_u, pooled=lam != 0)
    var_u = np.atleast_2d(np.cov((lam * grads_hat_u).T)).reshape(d, d)
    var = np.atleast_2d(np.cov((grads - lam * grads_hat).T)).reshape(d, d)
    sigma = inv_h @ (n / N * var_u + var) @ inv_h
    return _interval(theta, np.sqrt(np.diag(sigma) / n), alpha, lam, n, N)


def _clustered_interval(theta, lam, X, Y, Yhat, Xu, Yhat_u, groups: _Clusters, alpha) -> PPIResult:
    """Sandwich J^-1 (G / (G - 1)) sum_c u_c u_c' J^-1 with J the estimating equation's Jacobian; t(G - 1)."""
    a, b, _inv_h = _cluster_parts(theta, X, Y, Yhat, Xu, Yhat_u, groups)
    n, N = len(X), len(Xu)
    p, pu = expit(X @ theta), expit(Xu @ theta)
    jacobian = (1 - lam) * (X.T * (p * (1 - p))) @ X / n + lam * (Xu.T * (pu * (1 - pu))) @ Xu / N
    inv_j = np.linalg.inv(jacobian)
    u = a - lam * b
    g = groups.count if lam > 0 else groups.with_humans  # the clusters of the estimating equation
    meat = u.T @ u * (g / (g - 1) if g > 1 else np.nan)
    se = np.sqrt(np.diag(inv_j @ meat @ inv_j))
    return _interval(theta, se, alpha, lam, n, N, clusters=g, df=float(g - 1))


def classical_logistic(X, Y, *, alpha: float = 0.05, clusters=None) -> PPIResult:
    """The human-only estimate with its sandwich interval (cluster-robust when clusters are given)."""
    X, Y = np.asarray(X, float), np.asarray(Y, float)
    if clusters is not None:
        return ppi_logistic(X, Y, Y, X, Y, alpha=alpha, lam=0.0, clusters=clusters, clusters_u=clusters)
    theta = point_estimate(X, Y, Y, X, Y, lam=0.0)
    grads, _gh, _ghu, inv_h = _stats(theta, X, Y, Y, X, Y, pooled=False)
    sigma = inv_h @ np.atleast_2d(np.cov(grads.T)) @ inv_h
    return _interval(theta, np.sqrt(np.diag(sigma) / len(X)), alpha, 0.0, len(X), 0)


def _interval(theta, se, alpha, lam, n, N, *, clusters=None, df=None) -> PPIResult:
    quantile = t.ppf(1 - alpha / 2, df) if df is not None and df > 0 else norm.ppf(1 - alpha / 2)
    return PPIResult(theta, se, theta - quantile * se, theta + quantile * se, float(lam), n, N, clusters, df)


def worth_human_judgments(n_human: int, human_se: float, ppi_se: float) -> float:
    """The human sample size whose interval would be as narrow as PPI's (variance shrinks as 1 / n).

    Computed from the two standard errors of one kind (both cluster-robust on the page), so it is exactly
    n_human where PPI's lambda is 0 and never more than that through a quantile's difference."""
    return n_human * (human_se / ppi_se) ** 2 if ppi_se > 0 else float("nan")
