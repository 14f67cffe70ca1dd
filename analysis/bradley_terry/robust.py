"""Cluster-robust (sandwich) covariance over judges and answers, as R's `sandwich::vcovCL`.

Every judgment of a system on a vignette judges the same answer, so judgments that share an
answer are correlated when answers differ in quality beyond their system's ability (answer-level
SD tau); judgments by one judge may be correlated too. The sandwich

    V = I^-1 M I^-1,   M = sum over clusterings d of sign_d * G_d / (G_d - 1) * sum_g S_g S_g^T

(S_g: the score summed over cluster g; two-way clustering adds judges and answers and subtracts
their intersection, Cameron, Gelbach and Miller 2011) is exactly `vcovCL(fit, cluster = ...,
type = "HC0")` with its default `cadjust = TRUE`; `small_sample="HC1"` also multiplies by
(n - 1) / (n - k), n comparisons and k free coefficients, as type = "HC1" does.

How answers cluster a pair. A comparison involves two answers, (system a, vignette) and
(system b, vignette), and is correlated with every comparison that shares either one. An
ordinary clustering (one label per comparison) must put every comparison linked by a chain of
shared answers into one cluster; when every pair of systems is compared on a vignette that chain
joins all of the vignette's answers, so the answer clustering of a pair is its **vignette**
(`answers="vignette"`, the default, exactly `vcovCL(fit, cluster = d[, c("judge", "vignette")])`).
`answers="shared"` instead counts exactly the pairs of comparisons that share an answer (the
dyadic-robust meat of Fafchamps and Gubert 2007): sum_answers S_a S_a^T - sum_cells S_c S_c^T,
a comparison counted in both of its answers and once per cell (unordered pair of answers), with
G = number of answers; its intersection with judges is the same within each judge. vcovCL has no
such option; R reproduces it from `estfun(fit)` with `rowsum` (see `shared_answer_meat`).

With few vignettes the sandwich is noisy and a normal reference undercovers (simulated on the
paper's design, 7 systems x 12 vignettes x 8 judgments per cell, 95% intervals cover 0.91);
intervals and p therefore use Student's t with (fewest clusters - 1) degrees of freedom, as
`lmtest::coeftest(fit, vcov. = V, df = G - 1)` does (coverage 0.94 in the same simulation, at
tau = 0 and at tau = 0.3). `df=None` gives the normal reference instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse, stats

from .fitting import fit
from .grouping import order_signs
from .labels import codes, count_distinct
from .results import BTResult, Effect, _json_number

ANSWER_CLUSTERINGS = ("vignette", "shared")


@dataclass(frozen=True)
class RobustResult:
    """Wald tests with a cluster-robust covariance; per-item arrays follow `item_names`."""

    item_names: list[str]
    reference: str
    estimates: np.ndarray  # the maximum-likelihood estimates, unchanged
    se: np.ndarray
    z: np.ndarray  # estimate / se, referred to t(df) (normal when df is None)
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    covariance: np.ndarray  # (abilities..., order effect, covariates); the reference row is zero
    order_effect: Effect | None
    clusters: dict[str, int]  # how many judges, vignettes (and answers) the data hold
    answers: str  # "vignette" or "shared"
    df: int | None
    level: float
    n_comparisons: int

    def as_dict(self) -> dict:
        numbers = ("estimates", "se", "z", "p", "ci_low", "ci_high")
        return {
            "reference": self.reference,
            "answers": self.answers,
            "clusters": dict(self.clusters),
            "df": self.df,
            "level": self.level,
            "n_comparisons": self.n_comparisons,
            "order_effect": self.order_effect.as_dict() if self.order_effect else None,
            "items": [
                {"item": name} | {key: _json_number(getattr(self, key)[k]) for key in numbers}
                for k, name in enumerate(self.item_names)
            ],
        }


def cluster_robust(
    winners: np.ndarray,
    losers: np.ndarray,
    n_items: int,
    *,
    reference: int,
    judges: np.ndarray,
    vignettes: np.ndarray | None,
    counts: np.ndarray | None = None,
    first: np.ndarray | None = None,
    covariates: np.ndarray | None = None,
    item_names: list[str] | None = None,
    answers: str = "vignette",
    small_sample: str = "HC0",
    t_reference: bool = True,
    level: float = 0.95,
    fitted: BTResult | None = None,
    memo: dict | None = None,
) -> RobustResult:
    """Two-way (judge x answer) cluster-robust Wald tests of the maximum-likelihood abilities.

    `judges` and `vignettes` label each comparison (a judge's id and the vignette it was on);
    the answer of item k on vignette v is (k, v). Pass `fitted`, the `fit()` of the same data,
    to skip refitting. `vignettes=None` clusters on judges alone (`vcovCL(fit, cluster = ~ judge)`,
    t with judges - 1 df): an interval for these very answers, over other judges. `memo`, a dict shared by
    calls on the same data and `fitted` (the judge-only then the two-way sandwich), keeps the scores and
    the judge term of the meat for the next call.
    """
    if answers not in ANSWER_CLUSTERINGS:
        raise ValueError(f"answers must be one of {', '.join(ANSWER_CLUSTERINGS)}, not {answers!r}.")
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    judges = _labels(judges, len(winners))
    if vignettes is not None:
        vignettes = _labels(vignettes, len(winners))
    if fitted is None:
        fitted = fit(
            winners,
            losers,
            n_items,
            reference=reference,
            counts=counts,
            first=first,
            covariates=covariates,
            item_names=item_names,
        )
    memo = {} if memo is None else memo
    if memo.get("fitted") is not fitted:
        memo.clear()
        memo["fitted"] = fitted
        memo["scores"] = score_contributions(fitted, winners, losers, counts=counts, first=first, covariates=covariates)
    meat, clusters = _meat(memo, winners, losers, n_items, judges=judges, vignettes=vignettes, answers=answers)
    assert fitted.covariance is not None  # every fit sets it
    covariance = sandwich(fitted.covariance, meat, n=len(winners), small_sample=small_sample)
    df = min(clusters["judge"], clusters.get("vignette", clusters["judge"])) - 1 if t_reference else None
    return _robust_result(fitted, covariance, clusters, answers, df, level)


def _meat(memo: dict, winners, losers, n_items: int, *, judges, vignettes, answers: str) -> tuple[np.ndarray, dict]:
    """The meat over judges (and answers) from the scores in `memo`, and how many clusters there are."""
    scores, terms = memo["scores"], memo.setdefault("terms", {})
    if vignettes is None:
        return multiway_meat(scores, [judges], terms=terms), {"judge": _groups(judges)}
    clusters = {"judge": _groups(judges), "vignette": _groups(vignettes)}
    if answers == "vignette":
        return multiway_meat(scores, [judges, vignettes], terms=terms), clusters
    answer_a, answer_b = (
        vignettes * n_items + np.minimum(winners, losers),
        vignettes * n_items + np.maximum(winners, losers),
    )
    clusters["answer"] = _count(np.r_[answer_a, answer_b])
    return shared_answer_meat(scores, answer_a, answer_b, judges=judges), clusters


def score_contributions(
    result: BTResult,
    winners: np.ndarray,
    losers: np.ndarray,
    *,
    counts: np.ndarray | None = None,
    first: np.ndarray | None = None,
    covariates: np.ndarray | None = None,
) -> sparse.csr_matrix:
    """Each comparison's score (R's `estfun`): (y - p) x, x = e_a - e_b (+ order sign and
    covariates from a's side), a the lower-numbered item; a sparse (comparisons x coefficients)
    matrix. Comparisons with an item whose estimate is empty were not fitted: zero rows."""
    n_items = len(result.item_names)
    theta = result.coefficients()
    a, b = np.minimum(winners, losers), np.maximum(winners, losers)
    a_won = winners == a
    columns = []
    n_covariates = 0 if covariates is None else np.asarray(covariates).reshape(len(a), -1).shape[1]
    if len(theta) > n_items + n_covariates:  # the order effect was fitted
        signs = order_signs(winners, losers, first)
        columns = [np.where(a_won, signs, -signs).astype(float)]
    if covariates is not None:
        values = np.asarray(covariates, float).reshape(len(a), -1)
        columns += list((values * np.where(a_won, 1.0, -1.0)[:, None]).T)
    extra = np.column_stack(columns) if columns else np.zeros((len(a), 0))
    eta = theta[a] - theta[b] + extra @ theta[n_items:]
    residual = a_won - 1.0 / (1.0 + np.exp(-eta))
    if counts is not None:
        residual = residual * np.asarray(counts, float)
    residual = np.where(np.isfinite(residual), residual, 0.0)
    rows = np.arange(len(a))
    extra_rows, extra_columns = np.nonzero(extra)
    return sparse.csr_matrix(
        (
            np.concatenate([residual, -residual, residual[extra_rows] * extra[extra_rows, extra_columns]]),
            (np.concatenate([rows, rows, extra_rows]), np.concatenate([a, b, n_items + extra_columns])),
        ),
        shape=(len(a), len(theta)),
    )


def multiway_meat(
    scores: sparse.csr_matrix, clusterings: Sequence[np.ndarray], *, cadjust: bool = True, terms: dict | None = None
) -> np.ndarray:
    """sum_g S_g S_g^T with vcovCL's inclusion-exclusion over every intersection of the
    clusterings and its G / (G - 1) adjustment per term (not yet divided by n). `terms` keeps each
    intersection's term for a later call on the same scores whose first clusterings are these."""
    terms = {} if terms is None else terms
    meat = np.zeros((scores.shape[1], scores.shape[1]))
    labels: list[np.ndarray | None] = [None] * len(clusterings)
    for subset in range(1, 2 ** len(clusterings)):
        key = (subset, cadjust)
        if key not in terms:
            for d in range(len(clusterings)):
                if subset >> d & 1 and labels[d] is None:
                    labels[d] = _labels(clusterings[d], scores.shape[0])
            members = [member for d, member in enumerate(labels) if subset >> d & 1 and member is not None]
            group = _intersection(members)
            sign = 1.0 if len(members) % 2 else -1.0
            terms[key] = sign * _adjust(_groups(group), cadjust) * _cross(_sums(scores, group))
        meat += terms[key]
    return meat


def shared_answer_meat(
    scores: sparse.csr_matrix,
    answer_a: np.ndarray,
    answer_b: np.ndarray,
    *,
    judges: np.ndarray | None = None,
    cadjust: bool = True,
) -> np.ndarray:
    """Meat counting every pair of comparisons that share an answer (or, with `judges`, share a
    judge or an answer), each pair once.

    In R, with `ef <- estfun(fit)` and cells the unordered answer pairs:
    `crossprod(rowsum(rbind(ef, ef), c(answer_a, answer_b))) - crossprod(rowsum(ef, cell))`,
    times G / (G - 1), G the number of answers; with judges, plus vcovCL's judge term and minus
    the same shared-answer meat computed within each judge."""
    n = scores.shape[0]
    both = _labels(np.concatenate([np.asarray(answer_a), np.asarray(answer_b)]), 2 * n)  # one numbering for both
    answer_a, answer_b = both[:n], both[n:]
    meat = _dyadic(scores, answer_a, answer_b, None, cadjust)
    if judges is not None:
        judges = _labels(judges, scores.shape[0])
        meat += _adjust(_groups(judges), cadjust) * _cross(_sums(scores, judges))
        meat -= _dyadic(scores, answer_a, answer_b, judges, cadjust)
    return meat


def sandwich(bread: np.ndarray, meat: np.ndarray, *, n: int, small_sample: str = "HC0") -> np.ndarray:
    """bread meat bread, bread the model covariance (inverse information; fixed rows zero).

    HC1 multiplies by (n - 1) / (n - k), k the free coefficients, as vcovCL(type = "HC1")."""
    if small_sample not in ("HC0", "HC1"):
        raise ValueError(f"small_sample must be HC0 or HC1, not {small_sample!r}.")
    covariance = bread @ meat @ bread
    if small_sample == "HC1":
        k = int(np.count_nonzero(np.diag(bread)))
        covariance *= (n - 1) / (n - k)
    return covariance


def _dyadic(scores, answer_a, answer_b, within, cadjust) -> np.ndarray:
    """sum over answers of S S^T (a comparison in both of its answers) minus the same per cell."""
    n = scores.shape[0]
    outer = np.zeros(n, np.int64) if within is None else within
    both = _intersection([np.r_[outer, outer], np.r_[answer_a, answer_b]])
    stacked = sparse.vstack([scores, scores]).tocsr()
    low, high = np.minimum(answer_a, answer_b), np.maximum(answer_a, answer_b)
    cells = _intersection([outer, low, high])
    answers_term = _cross(_sums(stacked, both)) - _cross(_sums(scores, cells))
    return _adjust(_groups(both), cadjust) * answers_term


def _robust_result(fitted: BTResult, covariance, clusters, answers, df, level) -> RobustResult:
    n_items = len(fitted.item_names)
    estimates = fitted.coefficients()
    # Inclusion-exclusion can leave a variance at or below 0 (few vignettes): that SE is not estimated
    # (nan, as R's vcovCL gives), never a zero-width interval. The reference is fixed at 0 with SE 0.
    variance = np.diag(covariance)
    se = np.sqrt(np.where(variance > 0, variance, np.nan))
    se[fitted.item_names.index(fitted.reference)] = 0.0
    se = np.where(np.isfinite(estimates), se, np.nan)
    critical = stats.norm.ppf(0.5 + level / 2) if df is None else stats.t.ppf(0.5 + level / 2, df)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, estimates / se, np.nan)
    p = 2 * (stats.norm.sf(np.abs(z)) if df is None else stats.t.sf(np.abs(z), df))
    low, high = estimates - critical * se, estimates + critical * se
    order = None
    if fitted.order_effect is not None and len(estimates) > n_items + len(fitted.covariate_effects or []):
        order = Effect("order", *(float(values[n_items]) for values in (estimates, se, z, p, low, high)))
    return RobustResult(
        item_names=list(fitted.item_names),
        reference=fitted.reference,
        estimates=estimates[:n_items],
        se=se[:n_items],
        z=z[:n_items],
        p=p[:n_items],
        ci_low=low[:n_items],
        ci_high=high[:n_items],
        covariance=covariance,
        order_effect=order,
        clusters=clusters,
        answers=answers,
        df=df,
        level=level,
        n_comparisons=int(fitted.n_comparisons),
    )


def _labels(values, n: int) -> np.ndarray:
    values = np.asarray(values)
    if values.shape != (n,):
        raise ValueError(f"cluster labels must be one per comparison ({n}), not of shape {values.shape}.")
    return codes(values)


def _intersection(labels: Sequence[np.ndarray]) -> np.ndarray:
    """One label per distinct combination of the given labels."""
    combined = labels[0]
    for more in labels[1:]:
        combined = codes(combined * (int(more.max()) + 1) + more)
    return combined


def _groups(compact: np.ndarray) -> int:
    """How many groups labels numbered 0..G-1 (from `_labels` or `_intersection`) hold, without sorting them."""
    return int(compact.max()) + 1 if len(compact) else 0


def _count(labels: np.ndarray) -> int:
    return count_distinct(labels)


def _adjust(groups: int, cadjust: bool) -> float:
    return groups / (groups - 1) if cadjust and groups > 1 else 1.0


def _sums(scores: sparse.csr_matrix, group: np.ndarray) -> sparse.csr_matrix:
    """S_g for each group: the rows of `scores` summed by label."""
    n_groups = int(group.max()) + 1
    indicator = sparse.csr_matrix((np.ones(len(group)), (group, np.arange(len(group)))), shape=(n_groups, len(group)))
    return indicator @ scores


def _cross(sums: sparse.csr_matrix) -> np.ndarray:
    return (sums.T @ sums).toarray()
