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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse, special, stats
from scipy.linalg import blas, lapack
from scipy.sparse import csgraph

Z95 = stats.norm.ppf(0.975)
# Log-odds beyond this mean separation: Newton only crept towards infinity.
DIVERGED = 20.0
# Predicted log-likelihood gain below which a Newton step is taken without checking it.
SAFE_GAIN = 1e-3
# Spread of abilities beyond which the dense path avoids exp(theta - max theta) (underflow).
WIDE = 500.0


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class Effect:
    """One extra coefficient (order effect or a covariate) with its Wald test."""

    name: str
    estimate: float
    se: float
    z: float
    p: float
    ci_low: float
    ci_high: float

    def as_dict(self) -> dict:
        numbers = ("estimate", "se", "z", "p", "ci_low", "ci_high")
        return {"name": self.name} | {key: _json_number(getattr(self, key)) for key in numbers}


@dataclass
class BTResult:
    """A fitted Bradley-Terry model; per-item arrays follow `item_names`."""

    item_names: list[str]
    reference: str
    estimates: np.ndarray
    se: np.ndarray
    z: np.ndarray
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    wins: np.ndarray
    losses: np.ndarray
    n_comparisons: int
    log_likelihood: float
    deviance: float
    null_deviance: float
    converged: bool
    iterations: int
    order_effect: Effect | None = None
    covariate_effects: list[Effect] | None = None
    problems: list[str] = field(default_factory=list)
    # Covariance of (abilities..., order effect, covariates); the reference row is zero.
    covariance: np.ndarray | None = None

    def contrast(self, weights: np.ndarray) -> tuple[float, float]:
        """Estimate and SE of sum(w * lambda), using the full covariance."""
        w = np.zeros(len(self.covariance))
        w[: len(weights)] = weights
        return float(w @ np.nan_to_num(self.estimates)), float(np.sqrt(w @ self.covariance @ w))

    def difference(self, first: int, second: int) -> Effect:
        """Wald test of lambda_first - lambda_second."""
        weights = np.zeros(len(self.item_names))
        weights[first], weights[second] = 1.0, -1.0
        estimate, se = self.contrast(weights)
        if not (np.isfinite(self.estimates[first]) and np.isfinite(self.estimates[second])):
            estimate, se = math.nan, math.nan
        name = f"{self.item_names[first]} - {self.item_names[second]}"
        return _wald(name, estimate, se)

    def as_dict(self) -> dict:
        """JSON-safe summary: nan and infinities become None."""
        return {
            "reference": self.reference,
            "n_comparisons": int(self.n_comparisons),
            "log_likelihood": _json_number(self.log_likelihood),
            "deviance": _json_number(self.deviance),
            "null_deviance": _json_number(self.null_deviance),
            "converged": bool(self.converged),
            "iterations": int(self.iterations),
            "items": [self._item_dict(k) for k in range(len(self.item_names))],
            "order_effect": self.order_effect.as_dict() if self.order_effect else None,
            "covariate_effects": (
                None if self.covariate_effects is None else [effect.as_dict() for effect in self.covariate_effects]
            ),
            "problems": list(self.problems),
        }

    def _item_dict(self, k: int) -> dict:
        numbers = {"estimate": self.estimates, "se": self.se, "z": self.z, "p": self.p}
        numbers |= {"ci_low": self.ci_low, "ci_high": self.ci_high}
        return (
            {"item": self.item_names[k]}
            | {key: _json_number(values[k]) for key, values in numbers.items()}
            | {
                "wins": round(float(self.wins[k])),
                "losses": round(float(self.losses[k])),
            }
        )


@dataclass(frozen=True)
class BootstrapResult:
    """Percentile intervals from a participant-clustered bootstrap."""

    ci_low: np.ndarray
    ci_high: np.ndarray
    se: np.ndarray
    estimates: np.ndarray  # (n_boot, n_items); rows of failed refits are nan
    n_failed: int
    level: float


def _json_number(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _wald(name: str, estimate: float, se: float) -> Effect:
    z, p, low, high = wald_arrays(np.array([estimate]), np.array([se]))
    return Effect(name, float(estimate), float(se), float(z[0]), float(p[0]), float(low[0]), float(high[0]))


def wald_arrays(estimates: np.ndarray, se: np.ndarray):
    """Wald z, two-sided p and 95% interval; z and p are nan where se is 0 (the reference)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, estimates / se, np.nan)
    p = 2 * special.ndtr(-np.abs(z))
    return z, p, estimates - Z95 * se, estimates + Z95 * se


# ---------------------------------------------------------------- grouping


@dataclass(frozen=True)
class Grouped:
    """Comparisons collapsed into binomial rows: `wins` of item `a` over item `b` (a < b)."""

    a: np.ndarray
    b: np.ndarray
    extra: np.ndarray  # (rows, p) columns for the order effect and covariates, a's side
    wins: np.ndarray
    totals: np.ndarray
    row_of_comparison: np.ndarray  # which row each input comparison landed in


def order_signs(winners: np.ndarray, losers: np.ndarray, first: np.ndarray | None) -> np.ndarray:
    """z = +1 if the winner was shown first, -1 if the loser was, 0 if unknown."""
    if first is None:
        return np.zeros(len(winners), dtype=np.int64)
    first = np.asarray(first)
    return np.where(first == winners, 1, np.where(first == losers, -1, 0))


def count_table(winners, losers, n_items, *, counts=None, signs=None) -> np.ndarray:
    """(n, n, 3) wins of the row item over the column item, by z (-1, 0, +1) from the winner's side.

    One bincount over the comparisons; everything after it costs O(n_items^2)."""
    key = winners * n_items + losers
    if signs is None:
        table = np.zeros((n_items, n_items, 3))
        table[:, :, 1] = np.bincount(key, counts, minlength=n_items * n_items).reshape(n_items, n_items)
        return table
    flat = np.bincount(key * 3 + (signs + 1), counts, minlength=n_items * n_items * 3)
    return flat.reshape(n_items, n_items, 3).astype(float)


def group_table(table: np.ndarray) -> Grouped:
    """Binomial rows (a < b, z from a's side) from a count table; no per-comparison map."""
    upper_a, upper_b = np.triu_indices(table.shape[0], k=1)
    wins = table[upper_a, upper_b]
    losses = table[upper_b, upper_a, ::-1]  # b won with z = s from its side, i.e. -s from a's
    totals = wins + losses
    pair, sign_index = np.nonzero(totals > 0)
    extra = (sign_index - 1.0)[:, None]
    if not extra.any():
        extra = np.zeros((len(pair), 0))
    a, b = upper_a[pair], upper_b[pair]
    return Grouped(a, b, extra, wins[pair, sign_index], totals[pair, sign_index], None)


def group_comparisons(
    winners: np.ndarray,
    losers: np.ndarray,
    n_items: int,
    *,
    counts: np.ndarray | None = None,
    signs: np.ndarray | None = None,
    covariates: np.ndarray | None = None,
) -> Grouped:
    """Binomial rows keyed by (pair, order sign, covariates), with each comparison's row."""
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    if covariates is not None:
        return _group_with_covariates(winners, losers, n_items, counts, signs, covariates)
    grouped = group_table(count_table(winners, losers, n_items, counts=counts, signs=signs))
    sign = grouped.extra[:, 0].astype(np.int64) if grouped.extra.shape[1] else 0
    lookup = np.full(n_items * n_items * 3, -1)
    lookup[(grouped.a * n_items + grouped.b) * 3 + sign + 1] = np.arange(len(grouped.a))
    a, b = np.minimum(winners, losers), np.maximum(winners, losers)
    a_side = 0 if signs is None else np.where(winners == a, signs, -signs)
    rows = lookup[(a * n_items + b) * 3 + a_side + 1]
    return Grouped(grouped.a, grouped.b, grouped.extra, grouped.wins, grouped.totals, rows)


def _group_with_covariates(winners, losers, n_items, counts, signs, covariates) -> Grouped:
    counts = np.ones(len(winners)) if counts is None else np.asarray(counts, float)
    signs = np.zeros(len(winners), np.int64) if signs is None else np.asarray(signs, np.int64)
    a, b = np.minimum(winners, losers), np.maximum(winners, losers)
    a_won = winners == a
    # Columns are stated from a's side: flip sign when a is the loser.
    flip = np.where(a_won, 1, -1)
    pair_key = (a * n_items + b) * 3 + (signs * flip + 1)
    extra_cols = np.asarray(covariates, float).reshape(len(winners), -1) * flip[:, None]
    rows, inverse = np.unique(np.column_stack([pair_key, extra_cols]), axis=0, return_inverse=True)
    rows, inverse = rows[:, 0].astype(np.int64), inverse.ravel()
    n_rows = len(rows)
    wins = np.bincount(inverse, counts * a_won, minlength=n_rows)
    totals = np.bincount(inverse, counts, minlength=n_rows)
    pair, sign = rows // 3, rows % 3 - 1
    extra = _first_per_row(inverse, extra_cols, n_rows)
    if signs.any():
        extra = np.column_stack([sign.astype(float), extra])
    return Grouped(pair // n_items, pair % n_items, extra, wins, totals, inverse)


def _first_per_row(inverse: np.ndarray, values: np.ndarray, n_rows: int) -> np.ndarray:
    out = np.zeros((n_rows, values.shape[1]))
    out[inverse] = values  # identical within a row by construction
    return out


# ---------------------------------------------------------------- Newton-Raphson


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


def _score_and_information(theta, a, b, extra, wins, totals, n_items):
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
    args = (grouped.a, grouped.b, grouped.extra)
    active = np.ones(batch, bool)
    iterations = 0
    while active.any() and iterations < max_iter:
        iterations += 1
        idx = np.flatnonzero(active)
        score, info = _score_and_information(theta[idx], *args, wins[idx], totals[idx], n_items)
        step = _solve(info[:, free[:, None], free], score[:, free])
        gain = 0.5 * np.einsum("ri,ri->r", score[:, free], step)
        theta[np.ix_(idx, free)] = _halved(theta[idx], step, gain, free, args, wins[idx], totals[idx], n_items)
        active[idx[gain <= tol]] = False
    _, info = _score_and_information(theta, *args, wins, totals, n_items)
    finite = np.isfinite(theta).all(axis=1)
    return BatchFit(theta, info[:, free[:, None], free], ~active & finite, iterations, free)


def _solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(matrix, rhs[..., None])[..., 0]
    except np.linalg.LinAlgError:  # a singular member: least squares keeps the rest going
        return np.einsum("rij,rj->ri", np.linalg.pinv(matrix), rhs)


def _halved(theta, step, gain, free, args, wins, totals, n_items, tries=30):
    """theta + step, halving the step for members whose log-likelihood would drop.

    Members whose predicted gain is tiny are in Newton's quadratic zone, where the full step
    of a concave log-likelihood is safe, so only the others pay for the check."""
    moved = theta[:, free] + step
    check = np.flatnonzero(gain > SAFE_GAIN)
    if check.size == 0:
        return moved
    theta, step, wins, totals = theta[check], step[check], wins[check], totals[check]
    before = _log_likelihood(_linear_predictor(theta, *args, n_items), wins, totals)
    scale = np.ones(len(theta))
    for _ in range(tries):
        trial = theta.copy()
        trial[:, free] += scale[:, None] * step
        after = _log_likelihood(_linear_predictor(trial, *args, n_items), wins, totals)
        worse = ~(after >= before - 1e-12 * np.abs(before))
        if not worse.any():
            break
        scale[worse] *= 0.5
    moved[check] = trial[:, free]
    return moved


# ---------------------------------------------------------------- problems


def _quote(names, members) -> str:
    return ", ".join(f"'{names[m]}'" for m in members)


def find_problems(win_matrix: np.ndarray, reference: int, names: list[str]) -> tuple[list[str], np.ndarray]:
    """Words about what stops finite ML estimates, and which items can be estimated.

    Finite estimates exist exactly for the items in the reference's strongly connected
    component of the "beat" graph (Ford 1957); every other item is +/-infinity or not
    comparable with the reference.
    """
    if _surely_strongly_connected(win_matrix > 0):
        return [], np.ones(len(names), bool)
    graph = sparse.csr_matrix(win_matrix > 0)
    n_strong, strong = csgraph.connected_components(graph, directed=True, connection="strong")
    if n_strong == 1:  # the usual case: every item beats and is beaten along some chain
        return [], np.ones(len(names), bool)
    played = (win_matrix + win_matrix.T).sum(axis=1) > 0
    n_weak, weak = csgraph.connected_components(graph, directed=True, connection="weak")
    estimable = strong == strong[reference]
    problems = [f"'{names[k]}' has no comparisons: its ability cannot be estimated." for k in np.flatnonzero(~played)]
    groups = [np.flatnonzero(weak == c) for c in range(n_weak)]
    groups = [g for g in groups if played[g].any()]
    if len(groups) > 1:
        listed = "; ".join("{" + _quote(names, g) + "}" for g in groups)
        problems.append(
            f"The comparison graph is disconnected ({len(groups)} components: {listed}). Items outside "
            f"the component of '{names[reference]}' cannot be compared with it and get no estimate."
        )
    above = _reachable(graph.T, reference)  # items with a chain of wins down to the reference
    below = _reachable(graph, reference)
    for component in np.unique(strong[(weak == weak[reference]) & ~estimable]):
        members = np.flatnonzero(strong == component)
        problems.append(_infinite_message(win_matrix, members, names, reference, above, below))
    return problems, estimable & played


def _surely_strongly_connected(beats: np.ndarray, max_steps: int = 8) -> bool:
    """True when every item reaches item 0 and is reached from it within `max_steps` links of
    the dense "beat" graph; False means "not shown here" and csgraph decides."""
    if len(beats) == 0:
        return False
    for graph in (beats, beats.T):
        seen = graph[0].copy()
        seen[0] = True
        for _ in range(max_steps):
            grown = seen | graph[seen].any(axis=0)
            if grown.all():
                break
            if (grown == seen).all():
                return False
            seen = grown
        else:
            return False
    return True


def _reachable(graph, start: int) -> np.ndarray:
    order = csgraph.breadth_first_order(graph, start, directed=True, return_predecessors=False)
    mask = np.zeros(graph.shape[0], bool)
    mask[order] = True
    return mask


def _infinite_message(win_matrix, members, names, reference, above, below) -> str:
    who = _quote(names, members)
    if len(members) == 1 and win_matrix[members[0]].sum() == 0:
        return f"{who} never wins: its ability is minus infinity; its estimate is left empty."
    if len(members) == 1 and win_matrix[:, members[0]].sum() == 0:
        return f"{who} never loses: its ability is plus infinity; its estimate is left empty."
    ref = names[reference]
    if above[members[0]]:
        return (
            f"{who} never lose to the items they are ranked against on the way to '{ref}': their "
            f"abilities relative to '{ref}' are plus infinity; their estimates are left empty."
        )
    if below[members[0]]:
        return (
            f"{who} never beat the items that link them to '{ref}': their abilities relative to "
            f"'{ref}' are minus infinity; their estimates are left empty."
        )
    return f"{who} cannot be placed relative to '{ref}' (all links pass through infinite gaps); estimates left empty."


# ---------------------------------------------------------------- public fit


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
    max_iter: int = 100,
    tol: float = 1e-10,
) -> BTResult:
    """Maximum-likelihood Bradley-Terry fit with the `reference` item's ability fixed at 0.

    `first` (item shown first, -1 when unknown) adds an order effect delta; `covariates`
    (n_comparisons x p, winner minus loser) add style-control slopes. Deviances are those of
    the binomial rows (pair, order sign, covariates), as R's BTm reports them for such rows.
    When some abilities are infinite, only comparisons among the reference's strongly
    connected component are fitted and the other items' estimates are nan.
    """
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    names = list(item_names) if item_names is not None else [str(k) for k in range(n_items)]
    dense = first is None and covariates is None
    _check_inputs(winners, losers, n_items, reference, names, indices=not dense)
    counts = None if counts is None else np.asarray(counts, float)
    if dense:
        return _fit_dense(winners, losers, n_items, reference, counts, names, max_iter, tol)
    return _fit_general(winners, losers, n_items, reference, counts, first, covariates, names, max_iter, tol)


def _fit_general(winners, losers, n_items, reference, counts, first, covariates, names, max_iter, tol) -> BTResult:
    """Any model, on binomial rows (pair, order sign, covariates); inputs already checked."""
    signs = None if first is None else order_signs(winners, losers, first)
    if covariates is not None:
        covariates = np.asarray(covariates, float).reshape(len(winners), -1)
    table = count_table(winners, losers, n_items, counts=counts, signs=signs)
    wins_matrix = table.sum(axis=2)
    if np.diagonal(wins_matrix).any():
        raise ValueError("an item cannot be compared with itself.")
    problems, estimable = find_problems(wins_matrix, reference, names)
    grouped = _fitted_rows(table, estimable, winners, losers, counts, signs, covariates)
    n_covariates = 0 if covariates is None else covariates.shape[1]
    has_order = grouped.extra.shape[1] > n_covariates
    if first is not None and not has_order:
        problems.append(
            "The order effect cannot be estimated: no fitted comparison records which item was shown first."
        )
    batch = fit_batch(grouped, n_items, reference=reference, estimable=estimable, max_iter=max_iter, tol=tol)
    extra_names = ["order"] * has_order + [f"covariate {c}" for c in range(n_covariates)]
    result = _result(grouped, batch, wins_matrix, problems, names, reference, extra_names)
    if first is not None and result.order_effect is None:
        result.order_effect = _wald("order", math.nan, math.nan)
        result.converged = False
    if covariates is None:
        result.covariate_effects = None
    return result


def _fitted_rows(table, estimable, winners, losers, counts, signs, covariates) -> Grouped:
    """Binomial rows among the estimable items only (the rest have infinite abilities)."""
    if covariates is None:
        return group_table(table * (estimable[:, None, None] & estimable[None, :, None]))
    keep = estimable[winners] & estimable[losers]
    return group_comparisons(
        winners[keep],
        losers[keep],
        len(estimable),
        counts=None if counts is None else counts[keep],
        signs=None if signs is None else signs[keep],
        covariates=covariates[keep],
    )


def _check_inputs(winners, losers, n_items, reference, names, *, indices=True) -> None:
    if winners.ndim != 1 or winners.shape != losers.shape:
        raise ValueError("winners and losers must be one-dimensional and of the same length.")
    if not 0 <= reference < n_items:
        raise ValueError(f"reference {reference} is not an item index below {n_items}.")
    if len(names) != n_items:
        raise ValueError(f"{len(names)} item names given for {n_items} items.")
    if indices:
        _check_indices(winners, losers, n_items)


def _check_indices(winners: np.ndarray, losers: np.ndarray, n_items: int) -> None:
    """One reduction per int64 array: read as unsigned, a negative index is huge, so max < n checks both ends."""
    if winners.size and max(winners.view(np.uint64).max(), losers.view(np.uint64).max()) >= n_items:
        raise ValueError(f"item indices must lie in 0..{n_items - 1}.")


# ---------------------------------------------------------------- dense shortcut (no order, no covariates)


def _fit_dense(winners, losers, n_items, reference, counts, names, max_iter, tol) -> BTResult:
    """The plain model from the n x n win matrix; the same outputs as `_fit_general`."""
    wins_matrix = _win_matrix(winners, losers, n_items, counts)
    if np.diagonal(wins_matrix).any():
        raise ValueError("an item cannot be compared with itself.")
    problems, estimable = find_problems(wins_matrix, reference, names)
    fitted = wins_matrix if estimable.all() else wins_matrix * (estimable[:, None] & estimable[None, :])
    batch = _newton_dense(fitted, estimable, reference, max_iter, tol)
    result = _result(None, batch, wins_matrix, problems, names, reference, [], fitted=fitted)
    result.covariate_effects = None
    return result


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


def _result(grouped, batch, wins_matrix, problems, names, reference, extra_names, fitted=None) -> BTResult:
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


# ---------------------------------------------------------------- resampling by participant


@dataclass(frozen=True)
class ClusterTables:
    """Per-participant win and total counts on the shared binomial rows."""

    grouped: Grouped
    wins: sparse.csr_matrix  # (n_clusters, rows)
    totals: sparse.csr_matrix
    n_clusters: int

    def combine(self, multiplicity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row counts for each batch member, weighting participant c by multiplicity[:, c]."""
        return (self.wins.T @ multiplicity.T).T, (self.totals.T @ multiplicity.T).T


def cluster_tables(winners, losers, n_items, clusters, *, counts=None, signs=None, covariates=None) -> ClusterTables:
    counts = np.ones(len(winners)) if counts is None else np.asarray(counts, float)
    grouped = group_comparisons(winners, losers, n_items, counts=counts, signs=signs, covariates=covariates)
    _, cluster = np.unique(np.asarray(clusters), return_inverse=True)
    cluster = cluster.ravel()
    n_clusters = int(cluster.max()) + 1
    shape = (n_clusters, len(grouped.a))
    a_won = np.minimum(winners, losers) == np.asarray(winners)
    rows = grouped.row_of_comparison

    def table(values):
        return sparse.csr_matrix((values, (cluster, rows)), shape=shape)

    return ClusterTables(grouped, table(counts * a_won), table(counts), n_clusters)


def bootstrap(
    winners: np.ndarray,
    losers: np.ndarray,
    n_items: int,
    *,
    reference: int,
    clusters: np.ndarray,
    rng: np.random.Generator,
    counts: np.ndarray | None = None,
    first: np.ndarray | None = None,
    covariates: np.ndarray | None = None,
    n_boot: int = 1000,
    level: float = 0.95,
) -> BootstrapResult:
    """Participant-clustered percentile bootstrap of the abilities.

    Replicate r takes participants rng.integers(0, n_clusters, size=(n_boot, n_clusters))[r]
    (participants numbered in sorted order of their ids), so a peer can redraw the same
    samples. All refits run as one Newton batch warm-started at the full-data estimates.
    Replicates in which an item never wins or never loses are infinite: counted in
    `n_failed` and left out of the percentiles.
    """
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    full = fit(
        winners,
        losers,
        n_items,
        reference=reference,
        counts=counts,
        first=first,
        covariates=covariates,
    )
    estimable = np.isfinite(full.estimates)
    keep = estimable[winners] & estimable[losers]
    signs = None if first is None else order_signs(winners, losers, first)[keep]
    tables = cluster_tables(
        winners[keep],
        losers[keep],
        n_items,
        np.asarray(clusters)[keep],
        counts=None if counts is None else np.asarray(counts)[keep],
        signs=signs,
        covariates=None if covariates is None else np.asarray(covariates)[keep],
    )
    draws = rng.integers(0, tables.n_clusters, size=(n_boot, tables.n_clusters))
    multiplicity = _count_draws(draws, tables.n_clusters)
    estimates = _refit(tables, multiplicity, n_items, reference, estimable, full)
    return _percentiles(estimates[:, :n_items], level)


def _count_draws(draws: np.ndarray, size: int) -> np.ndarray:
    """How often each participant was drawn, per replicate."""
    flat = (np.arange(len(draws))[:, None] * size + draws).ravel()
    return np.bincount(flat, minlength=len(draws) * size).reshape(len(draws), size).astype(float)


def _refit(tables, multiplicity, n_items, reference, estimable, full) -> np.ndarray:
    """Estimates per batch member; nan where an ability is infinite or Newton failed."""
    wins, totals = tables.combine(multiplicity)
    grouped = tables.grouped
    item_wins, item_losses = item_wins_and_losses(grouped, wins, totals, n_items)
    finite = ((item_wins > 0) & (item_losses > 0) | ~estimable).all(axis=1)
    start = np.nan_to_num(np.concatenate([full.estimates, _extra_estimates(full)]))
    out = np.full((len(wins), len(start)), np.nan)
    if finite.any():
        batch = fit_batch(
            grouped,
            n_items,
            reference=reference,
            wins=wins[finite],
            totals=totals[finite],
            start=start,
            estimable=estimable,
            max_iter=50,
        )
        out[np.flatnonzero(finite)[batch.converged]] = batch.theta[batch.converged]
    out[:, :n_items][:, ~estimable] = np.nan
    return out


def item_wins_and_losses(grouped: Grouped, wins, totals, n_items) -> tuple[np.ndarray, np.ndarray]:
    """Per batch member, how often each item won and lost on the binomial rows."""
    losses = totals - wins
    item_wins = _scatter(grouped.a, wins, n_items) + _scatter(grouped.b, losses, n_items)
    item_losses = _scatter(grouped.a, losses, n_items) + _scatter(grouped.b, wins, n_items)
    return item_wins, item_losses


def _extra_estimates(result: BTResult) -> np.ndarray:
    effects = ([result.order_effect] if result.order_effect else []) + (result.covariate_effects or [])
    return np.array([effect.estimate for effect in effects], dtype=float)


def _percentiles(estimates: np.ndarray, level: float) -> BootstrapResult:
    ok = np.isfinite(estimates).any(axis=1)
    tail = 100 * (1 - level) / 2
    good = estimates[ok]
    return BootstrapResult(
        ci_low=np.percentile(good, tail, axis=0),
        ci_high=np.percentile(good, 100 - tail, axis=0),
        se=good.std(axis=0, ddof=1),
        estimates=estimates,
        n_failed=int((~ok).sum()),
        level=level,
    )


# ---------------------------------------------------------------- multiplicity and reliability


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (nan entries stay nan and do not count)."""
    pvalues = np.asarray(pvalues, float)
    adjusted = np.full(pvalues.shape, np.nan)
    present = np.flatnonzero(np.isfinite(pvalues))
    order = present[np.argsort(pvalues[present], kind="stable")]
    m = len(order)
    stepped = (m - np.arange(m)) * pvalues[order]
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(stepped))
    return adjusted


def centred_abilities(result: BTResult) -> tuple[np.ndarray, np.ndarray]:
    """Abilities centred to mean zero and their SEs, V' = M V M^T (reference-free)."""
    k = len(result.item_names)
    centring = np.eye(k) - 1.0 / k
    covariance = centring @ result.covariance[:k, :k] @ centring.T
    return centring @ result.estimates, np.sqrt(np.clip(np.diag(covariance), 0, None))


def separation_reliability(result: BTResult) -> float:
    """Rasch-style separation reliability (var(est) - mean(se^2)) / var(est).

    Uses centred abilities so that the answer does not depend on the reference item (whose
    reference-coded SE would be an artificial 0); var uses ddof=1. It can be negative when
    the abilities differ less than their noise.
    """
    estimates, se = centred_abilities(result)
    variance = np.var(estimates, ddof=1)
    return float((variance - np.mean(se**2)) / variance)


def split_half_reliability(
    winners: np.ndarray,
    losers: np.ndarray,
    clusters: np.ndarray,
    n_items: int,
    reference: int,
    rng: np.random.Generator,
    *,
    counts: np.ndarray | None = None,
    n_splits: int = 100,
) -> float:
    """Mean Spearman-Brown corrected correlation between abilities fitted on random halves
    of the participants (splits where a half has an infinite ability are skipped)."""
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    tables = cluster_tables(winners, losers, n_items, clusters, counts=counts)
    halves = rng.permuted(np.tile(np.arange(tables.n_clusters) % 2, (n_splits, 1)), axis=1)
    multiplicity = np.concatenate([halves, 1 - halves]).astype(float)
    full = fit(winners, losers, n_items, reference=reference, counts=counts)
    estimates = _refit(tables, multiplicity, n_items, reference, np.ones(n_items, bool), full)
    first_half, second_half = estimates[:n_splits], estimates[n_splits:]
    correlations = np.array([np.corrcoef(x, y)[0, 1] for x, y in zip(first_half, second_half, strict=True)])
    r = np.nanmean(correlations)
    return float(2 * r / (1 + r))


def first_position_rate(first: np.ndarray, winners: np.ndarray, counts: np.ndarray | None = None) -> float:
    """Share of comparisons with a known first item (first >= 0) won by the item shown first."""
    first, winners = np.asarray(first), np.asarray(winners)
    counts = np.ones(len(winners)) if counts is None else np.asarray(counts, float)
    known = first >= 0
    return float(counts[known & (first == winners)].sum() / counts[known].sum())


# ---------------------------------------------------------------- simulation


def simulate(
    abilities: np.ndarray,
    first_items: np.ndarray,
    second_items: np.ndarray,
    rng: np.random.Generator,
    *,
    order_effect: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """One outcome per (first, second) pair: P(first wins) = expit(l_f - l_s + delta)."""
    abilities = np.asarray(abilities, float)
    first_items, second_items = np.asarray(first_items), np.asarray(second_items)
    eta = abilities[first_items] - abilities[second_items] + order_effect
    first_wins = rng.random(len(first_items)) < 1.0 / (1.0 + np.exp(-eta))
    winners = np.where(first_wins, first_items, second_items)
    losers = np.where(first_wins, second_items, first_items)
    return winners, losers
