"""The public fit(): checks the inputs, takes the dense or the general path, and builds the BTResult."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import blas, lapack

from .dense import _dense_fit_statistics, _newton_dense, _win_matrix
from .firth import fit_batch_firth
from .general import BatchFit, _deviance, _linear_predictor, _log_likelihood, fit_batch
from .grouping import Grouped, count_table, group_comparisons, group_table, order_signs
from .problems import _check_indices, bias_reduced_problems, find_problems
from .results import BTResult, _wald, wald_arrays

# Log-odds beyond this mean separation: Newton only crept towards infinity.
DIVERGED = 20.0


@dataclass(frozen=True)
class FitData:
    """Checked comparisons for one fit: item indices, optional counts, order and covariates."""

    winners: np.ndarray
    losers: np.ndarray
    n_items: int
    reference: int
    names: list[str]
    counts: np.ndarray | None = None
    first: np.ndarray | None = None  # item shown first, -1 when unknown
    covariates: np.ndarray | None = None  # (comparisons, p), winner minus loser


def fit(
    winners: np.ndarray,
    losers: np.ndarray,
    n_items: int,
    *,
    reference: int,
    counts: np.ndarray | None = None,
    first: np.ndarray | None = None,
    covariates: np.ndarray | None = None,
    item_names: list[str] | None = None,
    bias_reduced: bool = False,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> BTResult:
    """Maximum-likelihood Bradley-Terry fit with the `reference` item's ability fixed at 0.

    `first` (item shown first, -1 when unknown) adds an order effect delta; `covariates`
    (n_comparisons x p, winner minus loser) add style-control slopes. Deviances are those of
    the binomial rows (pair, order sign, covariates), as R's BTm reports them for such rows.
    When some abilities are infinite, only comparisons among the reference's strongly
    connected component are fitted and the other items' estimates are nan.

    `bias_reduced` fits Firth's bias-reduced estimates instead (BTm(..., br = TRUE)): finite
    for every item connected with the reference, even one that never wins. Items in other
    components are estimated relative to their component's last item, as R reports them, and
    returned in `unlinked` rather than beside the reference-coded estimates.
    """
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    names = list(item_names) if item_names is not None else [str(k) for k in range(n_items)]
    dense = first is None and covariates is None and not bias_reduced
    _check_inputs(winners, losers, n_items=n_items, reference=reference, names=names, indices=not dense)
    data = FitData(
        winners,
        losers,
        n_items,
        reference,
        names,
        counts=None if counts is None else np.asarray(counts, float),
        first=first,
        covariates=None if covariates is None else np.asarray(covariates, float).reshape(len(winners), -1),
    )
    if dense:
        return _fit_dense(data, max_iter=max_iter, tol=tol)
    return _fit_general(data, max_iter=max_iter, tol=tol, bias_reduced=bias_reduced)


def _fit_general(data: FitData, *, max_iter: int, tol: float, bias_reduced: bool = False) -> BTResult:
    """Any model, on binomial rows (pair, order sign, covariates); inputs already checked."""
    signs = None if data.first is None else order_signs(data.winners, data.losers, data.first)
    table = count_table(data.winners, data.losers, data.n_items, counts=data.counts, signs=signs)
    wins_matrix = table.sum(axis=2)
    if np.diagonal(wins_matrix).any():
        raise ValueError("an item cannot be compared with itself.")
    if bias_reduced:
        problems, fitted, groups = bias_reduced_problems(wins_matrix, data.reference, data.names)
    else:
        (problems, fitted), groups = find_problems(wins_matrix, data.reference, data.names), []
    grouped = _fitted_rows(table, fitted | _members(groups, data.n_items), data, signs)
    n_covariates = 0 if data.covariates is None else data.covariates.shape[1]
    has_order = grouped.extra.shape[1] > n_covariates
    if data.first is not None and not has_order:
        problems.append(
            "The order effect cannot be estimated: no fitted comparison records which item was shown first."
        )
    if bias_reduced:
        batch = fit_batch_firth(grouped, data.n_items, reference=data.reference, fitted=fitted, tol=tol)
    else:
        batch = fit_batch(grouped, data.n_items, reference=data.reference, estimable=fitted, max_iter=max_iter, tol=tol)
    extra_names = ["order"] * has_order + [f"covariate {c}" for c in range(n_covariates)]
    result = _result(
        grouped=grouped,
        batch=batch,
        wins_matrix=wins_matrix,
        problems=problems,
        names=data.names,
        reference=data.reference,
        extra_names=extra_names,
    )
    if groups:
        _set_apart(result, groups)
    result.bias_reduced = bias_reduced
    if data.first is not None and result.order_effect is None:
        result.order_effect = _wald("order", math.nan, math.nan)
        result.converged = False
    if data.covariates is None:
        result.covariate_effects = None
    return result


def _members(groups: list[np.ndarray], n_items: int) -> np.ndarray:
    mask = np.zeros(n_items, bool)
    for members in groups:
        mask[members] = True
    return mask


def _set_apart(result: BTResult, groups: list[np.ndarray]) -> None:
    """Move the estimates of components not linked with the reference to `unlinked`.

    Within a group they are relative to its last item (held at 0); they say nothing about the
    reference, so the reference-coded arrays show them as empty."""
    names = result.item_names
    assert result.covariance is not None  # set by the fit
    for members in groups:
        anchor = members[-1]
        for k in members[:-1]:
            result.unlinked.append(_wald(f"{names[k]} - {names[anchor]}", result.estimates[k], result.se[k]))
        for values in (result.estimates, result.se, result.z, result.p, result.ci_low, result.ci_high):
            values[members] = np.nan
        result.covariance[members, :] = 0.0
        result.covariance[:, members] = 0.0
    result.converged = False


def _fitted_rows(table, estimable, data: FitData, signs) -> Grouped:
    """Binomial rows among the estimable items only (the rest have infinite abilities)."""
    if data.covariates is None:
        return group_table(table * (estimable[:, None, None] & estimable[None, :, None]))
    keep = estimable[data.winners] & estimable[data.losers]
    return group_comparisons(
        data.winners[keep],
        data.losers[keep],
        len(estimable),
        counts=None if data.counts is None else data.counts[keep],
        signs=None if signs is None else signs[keep],
        covariates=data.covariates[keep],
    )


def _check_inputs(
    winners: np.ndarray, losers: np.ndarray, *, n_items: int, reference: int, names: list[str], indices: bool = True
) -> None:
    if winners.ndim != 1 or winners.shape != losers.shape:
        raise ValueError("winners and losers must be one-dimensional and of the same length.")
    if not 0 <= reference < n_items:
        raise ValueError(f"reference {reference} is not an item index below {n_items}.")
    if len(names) != n_items:
        raise ValueError(f"{len(names)} item names given for {n_items} items.")
    if indices:
        _check_indices(winners, losers, n_items)


def _fit_dense(data: FitData, *, max_iter: int, tol: float) -> BTResult:
    """The plain model from the n x n win matrix; the same outputs as `_fit_general`."""
    wins_matrix = _win_matrix(data.winners, data.losers, data.n_items, data.counts)
    if np.diagonal(wins_matrix).any():
        raise ValueError("an item cannot be compared with itself.")
    problems, estimable = find_problems(wins_matrix, data.reference, data.names)
    fitted = wins_matrix if estimable.all() else wins_matrix * (estimable[:, None] & estimable[None, :])
    batch = _newton_dense(fitted, estimable, data.reference, max_iter, tol)
    result = _result(
        grouped=None,
        batch=batch,
        wins_matrix=wins_matrix,
        problems=problems,
        names=data.names,
        reference=data.reference,
        extra_names=[],
        fitted=fitted,
    )
    result.covariate_effects = None
    return result


def _result(
    *,
    grouped: Grouped | None,
    batch: BatchFit,
    wins_matrix: np.ndarray,
    problems: list[str],
    names: list[str],
    reference: int,
    extra_names: list[str],
    fitted: np.ndarray | None = None,
) -> BTResult:
    """Statistics come from the binomial rows `grouped`, or (dense path) from the fitted win matrix."""
    n_items = len(names)
    converged = bool(batch.converged[0])
    if not converged:
        problems.append(f"The fit did not converge in {batch.iterations} iterations; estimates are left empty.")
    estimated = np.zeros(len(batch.theta[0]), bool)
    estimated[batch.free] = converged
    estimated[reference] = True
    covariance = np.zeros((len(estimated), len(estimated)))
    rows = np.zeros((len(estimated), len(batch.free)))
    rows[batch.free] = _invert(batch.information[0])
    covariance[:, batch.free] = rows  # = covariance[np.ix_(free, free)], without 2-d fancy indexing
    estimated &= ~_diverged(batch.theta[0], np.diag(covariance), names + extra_names, problems)
    theta = np.where(estimated, batch.theta[0], np.nan)
    se = np.where(estimated, np.sqrt(np.clip(np.diag(covariance), 0, None)), np.nan)
    if fitted is None:
        assert grouped is not None  # one of the two is always given
        eta = _linear_predictor(np.nan_to_num(theta)[None], grouped.a, grouped.b, grouped.extra, n_items)
        log_likelihood = float(_log_likelihood(eta, grouped.wins[None], grouped.totals[None])[0])
        deviance = _deviance(eta[0], grouped.wins, grouped.totals)
        null_deviance = _deviance(np.zeros(len(grouped.a)), grouped.wins, grouped.totals)
    else:
        log_likelihood, deviance, null_deviance = _dense_fit_statistics(np.nan_to_num(theta), fitted)
    effects = [_wald(name, theta[n_items + c], se[n_items + c]) for c, name in enumerate(extra_names)]
    order = effects.pop(0) if extra_names[:1] == ["order"] else None
    z, p, ci_low, ci_high = wald_arrays(theta[:n_items], se[:n_items])
    return BTResult(
        item_names=names,
        reference=names[reference],
        estimates=theta[:n_items],
        se=se[:n_items],
        z=z,
        p=p,
        ci_low=ci_low,
        ci_high=ci_high,
        wins=wins_matrix.sum(axis=1),
        losses=wins_matrix.sum(axis=0),
        n_comparisons=round(wins_matrix.sum()),
        log_likelihood=log_likelihood,
        deviance=deviance,
        null_deviance=null_deviance,
        converged=converged and bool(np.isfinite(theta).all()),
        iterations=batch.iterations,
        order_effect=order,
        covariate_effects=effects,
        problems=problems,
        covariance=covariance,
    )


def _diverged(theta, variance, names, problems) -> np.ndarray:
    """Estimates that ran off to infinity (separation) or have no finite variance."""
    runaway = np.abs(theta) > DIVERGED
    for k in np.flatnonzero(runaway):
        problems.append(
            f"The estimate for '{names[k]}' diverges (|{theta[k]:.0f}| log-odds): its outcomes are "
            "perfectly separated, so its ability or effect is infinite; its estimate is left empty."
        )
    singular = ~np.isfinite(variance)
    if singular.any():
        problems.append("The model is not identifiable (singular information matrix); estimates are left empty.")
    return runaway | singular


def _invert(information: np.ndarray) -> np.ndarray:
    """Inverse of an information matrix; all nan when it is singular.

    Cholesky (L^-T L^-1 by potrf, trtri, trmm), or LU (getrf + getri) when it is not positive
    definite. Both are cheaper than np.linalg.inv, which solves against the identity, and
    neither wakes BLAS threads at these sizes (potri and gemm do: slow on a busy machine)."""
    if information.size == 0:
        return np.zeros_like(information)
    factor, info = lapack.dpotrf(information, lower=True, clean=True)
    if info == 0:
        factor, info = lapack.dtrtri(factor, lower=True)
        if info == 0:
            return blas.dtrmm(1.0, factor, factor, side=0, lower=1, trans_a=1)
    lu, pivots, info = lapack.dgetrf(information)
    if info == 0:
        inverse, info = lapack.dgetri(lu, pivots)
    if info != 0:
        return np.full_like(information, np.nan)
    return inverse
