"""The headline test: CR2 (Bell–McCaffrey) over vignettes, the judge term as a design effect, Satterthwaite df.

Why this one (docs/statistics.md, "The headline test"). Judgments that share an answer are correlated, and
answers are nested in vignettes, so the vignettes are the clusters that limit what the data can say: with 3–12 of
them an ordinary (CR0/CR1) sandwich is biased down and noisy, and inclusion–exclusion over judges and vignettes
(V_J + V_V − V_JV) can come out near zero or negative. CR2 removes most of the bias (exactly, under a working
model) and is positive semi-definite by construction; the Satterthwaite degrees of freedom follow the design (few
or unbalanced vignettes give fewer df, per system). Judges are many (hundreds), so their clustering is estimated
well: it enters as a design effect per coefficient, deff = max(1, V_J / V_JV) from the judge- and the
judge × vignette-clustered sandwiches (vcovCL, HC0), multiplying the CR2 variance. deff never shrinks it. Nor
is a system's SE ever below WALD_FLOOR (one half) x its model-based (Wald) SE: the variance over answers and judges
contains the variance of judging these very answers again (law of total variance), so a CR2 estimate far below it
is noise from few vignettes, and printing it gave near-zero SEs (0.004 x Wald at 3 vignettes). A floor at the full
Wald SE, on top of the Satterthwaite t that already pays for CR2's noise, over-covered (1.000 at 3 vignettes,
benchmarks/coverage.py); half of it removes the near-zero SEs and leaves coverage near 0.95.

In R (tests/analysis/test_headline_test.py checks every number against real R):

    fit <- glm(y ~ 0 + X, family = binomial)    # one row per comparison: X = e_a - e_b (+ order sign z_a)
    V2  <- clubSandwich::vcovCR(fit, cluster = d$vignette, type = "CR2")
    ct  <- clubSandwich::coef_test(fit, vcov = V2, test = "Satterthwaite")   # df_Satt
    deff <- pmax(1, diag(sandwich::vcovCL(fit, cluster = ~ judge, type = "HC0")) /
                    diag(sandwich::vcovCL(fit, cluster = ~ cell, type = "HC0")))    # cell = judge x vignette
    se <- sqrt(pmax(deff * diag(V2), 0.25 * diag(vcov(fit))))    # never below half the Wald SE
    p <- 2 * pt(-abs(coef(fit) / se), ct$df_Satt)

CR2 is computed per vignette on the distinct design rows (pair, order sign) rather than on every comparison:
rows that share a design row share their fitted probability, so the n_j x n_j matrices of clubSandwich reduce
exactly to g_j x g_j ones (g_j distinct rows, at most pairs x 3), whatever the number of judgments.

No test (p, interval: nan, `why_not` in words) with fewer than MIN_VIGNETTES vignettes, with one judge, or per
system where its answers were judged on fewer than MIN_VIGNETTES vignettes or its variance cannot be estimated
(SE not positive and finite, or under one degree of freedom).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from .fitting import fit
from .grouping import order_signs
from .labels import codes, count_distinct, distinct_rows
from .results import BTResult

# Fewer vignettes than this: no test. With 2 the Satterthwaite df are about 1 and the interval spans almost
# anything; the coverage study (benchmarks/coverage.py) holds the headline to 0.95 ± 0.02 from 3 up.
MIN_VIGNETTES = 3
MIN_JUDGES = 2
MIN_DF = 1.0
# No SE below this share of the Wald SE (the module docstring says why this share, docs/statistics.md measures it).
WALD_FLOOR = 0.5
INTERVAL_NAME = "CR2 over vignettes × judge design effect, Satterthwaite df"


@dataclass(frozen=True)
class ContrastTest:
    """The headline test of one contrast sum(w * lambda) (a difference of two systems, a set's mean...)."""

    estimate: float
    se: float
    df: float
    t: float
    p: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class HeadlineTest:
    """Per system (arrays follow `item_names`; the reference has estimate 0 and SE 0): the estimate, SE,
    Satterthwaite df, t, two-sided p and interval of the headline test. Where no test is possible, p and
    the interval are nan: for every system when `why_not` is set (the whole question), else per system
    with `not_estimable[k]` saying why. `covariance` is the abilities' headline covariance (nan rows for
    systems without an estimate)."""

    item_names: list[str]
    reference: str
    estimates: np.ndarray
    se: np.ndarray
    df: np.ndarray
    t: np.ndarray
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    covariance: np.ndarray
    design_effect: np.ndarray  # the judge term: variance multiplier >= 1 per system (1 for the reference)
    multiplier: np.ndarray  # what multiplies CR2's variance: the judge term, or more where the Wald floor binds
    n_vignettes: int
    n_judges: int
    level: float
    why_not: str  # "" when the question is tested; else why there is no test, in words
    not_estimable: list[str]  # per system: why its test is missing ("" when it is there)
    _free: np.ndarray = field(repr=False)  # the systems with a CR2 coefficient, in coefficient order
    _cluster_gg: np.ndarray = field(repr=False)  # (J, p, p) per vignette: M E_j Theta_j E_j' M (Satterthwaite)
    _cluster_h: np.ndarray = field(repr=False)  # (J, p, p) per vignette: M E_j U_j chol(M)
    _cr2: np.ndarray = field(repr=False)  # (p, p) CR2 covariance of the free coefficients, before deff

    @property
    def tested(self) -> bool:
        return not self.why_not

    def contrast(self, weights: np.ndarray) -> ContrastTest:
        """The headline test of sum(weights * lambda) over the systems: SE from the headline covariance,
        Satterthwaite df of that contrast (clubSandwich's `linear_contrast` on the deff-scaled contrast).
        nan throughout when the question has no test or a weighted system has no estimate."""
        weights = np.asarray(weights, float)
        nothing = ContrastTest(math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
        used = np.flatnonzero(weights != 0)
        if self.why_not or any(self.not_estimable[k] for k in used):
            return nothing
        estimate = float(weights @ np.nan_to_num(self.estimates))
        scaled = (weights * np.sqrt(self.multiplier))[self._free]  # the reference's coefficient is fixed at 0
        variance = float(scaled @ self._cr2 @ scaled)
        if not variance > 0:
            return nothing
        se = math.sqrt(variance)
        df = _satterthwaite(scaled, self._cluster_gg, self._cluster_h)
        return ContrastTest(estimate, se, df, *_t_test(estimate, se, df, self.level))

    def as_dict(self) -> dict:
        numbers = ("estimates", "se", "df", "t", "p", "ci_low", "ci_high", "design_effect")
        return {
            "interval": INTERVAL_NAME,
            "reference": self.reference,
            "tested": self.tested,
            "why_not": self.why_not,
            "n_vignettes": self.n_vignettes,
            "n_judges": self.n_judges,
            "level": self.level,
            "items": [
                {"item": name, "not_estimable": self.not_estimable[k]}
                | {key: _finite(getattr(self, key)[k]) for key in numbers}
                for k, name in enumerate(self.item_names)
            ],
        }


def headline_test(
    winners: np.ndarray,
    losers: np.ndarray,
    n_items: int,
    *,
    reference: int,
    judges: np.ndarray,
    vignettes: np.ndarray,
    first: np.ndarray | None = None,
    counts: np.ndarray | None = None,
    item_names: list[str] | None = None,
    fitted: BTResult | None = None,
    level: float = 0.95,
) -> HeadlineTest:
    """The headline test of each system's ability against the reference (module docstring).

    One entry per comparison in `winners`, `losers`, `judges` and `vignettes` (labels of any integer kind),
    `counts` (comparisons a row stands for; default 1) and `first` (the item shown first: with it the fit has
    an order effect, a coefficient of the CR2 like any other). `fitted`, the `fit()` of exactly these data
    with the same `first`, saves the refit. Stable signature: power simulations and per-set differences call it.
    """
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    names = list(item_names) if item_names is not None else [str(k) for k in range(n_items)]
    if fitted is None:
        fitted = fit(winners, losers, n_items, reference=reference, counts=counts, first=first, item_names=names)
    n = len(winners)
    weights = np.ones(n) if counts is None else np.asarray(counts, float)
    judges, vignettes = codes(np.asarray(judges)), codes(np.asarray(vignettes))
    n_vignettes, n_judges = count_distinct(vignettes), count_distinct(judges)
    theta = fitted.coefficients()
    estimates = np.asarray(fitted.estimates, float)[:n_items]
    finite_items = np.isfinite(estimates)
    free_items = np.flatnonzero(finite_items & (np.arange(n_items) != reference))
    has_order = len(theta) > n_items  # the fit has an order effect (plain fits carry no covariates here)

    # Only comparisons between systems with an estimate enter (the fit's own rule for infinite abilities).
    a, b = np.minimum(winners, losers), np.maximum(winners, losers)
    keep = finite_items[a] & finite_items[b] & (weights > 0)
    signs = order_signs(winners, losers, first)
    a_side = np.where(winners == a, signs, -signs).astype(float)  # z from a's side
    column = np.full(n_items, -1)
    column[free_items] = np.arange(len(free_items))
    p = len(free_items) + int(has_order)
    eta = theta[a] - theta[b] + (theta[n_items] * a_side if has_order else 0.0)
    mu = 1.0 / (1.0 + np.exp(-np.where(keep, eta, 0.0)))
    residual = weights * ((winners == a) - mu)

    # Distinct design rows per vignette: (vignette, a, b, z).
    key = np.stack([vignettes, a, b, a_side.astype(np.int64)], axis=1)[keep]
    rows, row_of = distinct_rows(key)
    totals = np.bincount(row_of, weights[keep], minlength=len(rows))
    summed = np.bincount(row_of, residual[keep], minlength=len(rows))
    x = np.zeros((len(rows), p))
    for side, sign in ((1, 1.0), (2, -1.0)):
        free = column[rows[:, side]] >= 0
        x[np.flatnonzero(free), column[rows[free, side]]] = sign
    if has_order:
        x[:, -1] = rows[:, 3]
    mu_rows = 1.0 / (1.0 + np.exp(-(x @ _free_theta(theta, free_items, has_order, n_items))))
    v = mu_rows * (1.0 - mu_rows)

    information = (x * (totals * v)[:, None]).T @ x
    bread = np.linalg.pinv(information, hermitian=True)
    gg, hh, components = _cr2_per_vignette(x, v, totals, summed, rows[:, 0], bread)
    cr2 = bread @ (components.T @ components) @ bread

    judge_scores = (x[row_of] * residual[keep][:, None]) if p else np.zeros((0, 0))
    deff_free = _judge_design_effect(judge_scores, judges[keep], vignettes[keep], bread)
    design_effect = np.ones(n_items)
    design_effect[free_items] = deff_free[: len(free_items)]
    # The floor: no SE below WALD_FLOOR x the model-based (Wald) SE (module docstring).
    with np.errstate(divide="ignore", invalid="ignore"):
        floor = np.where(np.diag(cr2) > 0, WALD_FLOOR**2 * np.diag(bread) / np.diag(cr2), 1.0)
    multiplier_free = np.maximum(deff_free, np.nan_to_num(floor, nan=1.0, posinf=1.0))
    multiplier = np.ones(n_items)
    multiplier[free_items] = multiplier_free[: len(free_items)]
    covariance = np.full((n_items, n_items), np.nan)
    scale = np.sqrt(multiplier_free[: len(free_items)])
    covariance[np.ix_(free_items, free_items)] = cr2[: len(free_items), : len(free_items)] * np.outer(scale, scale)
    covariance[reference, :] = np.where(finite_items, 0.0, np.nan)
    covariance[:, reference] = np.where(finite_items, 0.0, np.nan)

    se = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    df = np.full(n_items, np.nan)
    for j, k in enumerate(free_items):
        unit = np.zeros(p)
        unit[j] = 1.0
        df[k] = _satterthwaite(unit, gg, hh)
    why_not = _why_no_test(n_vignettes, n_judges)
    per_item = _vignettes_per_item(a[keep], b[keep], vignettes[keep], n_items)
    not_estimable = [
        _why_not_estimable(k == reference, estimates[k], se[k], df[k], why_not, per_item[k]) for k in range(n_items)
    ]
    t, pvalue, low, high = (np.full(n_items, np.nan) for _ in range(4))
    for k in free_items:
        if not why_not and not not_estimable[k]:
            t[k], pvalue[k], low[k], high[k] = _t_test(float(estimates[k]), float(se[k]), float(df[k]), level)
    if finite_items[reference]:
        low[reference] = high[reference] = 0.0
    return HeadlineTest(
        item_names=names,
        reference=names[reference],
        estimates=estimates,
        se=se,
        df=df,
        t=t,
        p=pvalue,
        ci_low=low,
        ci_high=high,
        covariance=covariance,
        design_effect=design_effect,
        multiplier=multiplier,
        n_vignettes=n_vignettes,
        n_judges=n_judges,
        level=level,
        why_not=why_not,
        not_estimable=not_estimable,
        _free=free_items,
        _cluster_gg=gg[:, : len(free_items), : len(free_items)],
        _cluster_h=hh[:, : len(free_items), :],
        _cr2=cr2[: len(free_items), : len(free_items)],
    )


def why_no_test(n_vignettes: int, n_judges: int) -> str:
    """The one rule for when a question gets no test, in words ("" when it does): power, sets and the
    surfaces ask it too."""
    return _why_no_test(n_vignettes, n_judges)


def _why_no_test(n_vignettes: int, n_judges: int) -> str:
    if n_vignettes < MIN_VIGNETTES:
        return (
            f"No test: only {n_vignettes} vignette{'' if n_vignettes == 1 else 's'}. Results cannot be generalised "
            f"to other vignettes (or other answers of these systems) from fewer than {MIN_VIGNETTES}."
        )
    if n_judges < MIN_JUDGES:
        return "No test: only one judge. Results cannot be generalised to other judges from one."
    return ""


def _vignettes_per_item(a: np.ndarray, b: np.ndarray, vignettes: np.ndarray, n_items: int) -> np.ndarray:
    """How many vignettes each system's answers were judged on (in the comparisons that enter the test)."""
    pairs, _ = distinct_rows(np.r_[np.stack([a, vignettes], 1), np.stack([b, vignettes], 1)])
    return np.bincount(pairs[:, 0], minlength=n_items) if len(pairs) else np.zeros(n_items, np.int64)


def _why_not_estimable(
    is_reference: bool, estimate: float, se: float, df: float, why_not: str, n_vignettes: int
) -> str:
    if is_reference or why_not:
        return ""
    if not math.isfinite(estimate):
        return "no finite estimate"
    if n_vignettes < MIN_VIGNETTES:
        return (
            f"its answers were judged on only {n_vignettes} vignette{'' if n_vignettes == 1 else 's'}: "
            f"fewer than {MIN_VIGNETTES} cannot be generalised from"
        )
    if not (math.isfinite(se) and se > 0):
        return "its variance cannot be estimated from these vignettes"
    if not df >= MIN_DF:
        return f"under {MIN_DF:g} degree of freedom for its variance: the vignettes cannot estimate it"
    return ""


def _free_theta(theta: np.ndarray, free_items: np.ndarray, has_order: bool, n_items: int) -> np.ndarray:
    return np.r_[theta[free_items], theta[n_items : n_items + 1] if has_order else []]


def _cr2_per_vignette(x, v, totals, summed, cluster, bread) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per vignette j (clubSandwich's inverse-variance CR2 for a glm, on distinct rows): the Satterthwaite
    pieces G_j G_j' and H_j, and the adjusted score sum E_j r_j (the meat is sum of their outer products)."""
    p = x.shape[1]
    labels = np.unique(cluster)
    gg, hh, components = np.zeros((len(labels), p, p)), np.zeros((len(labels), p, p)), np.zeros((len(labels), p))
    lower = _cholesky_lower(bread)
    for index, label in enumerate(labels):
        rows = cluster == label
        xj, vj, nj = x[rows], v[rows], totals[rows]
        # G = V (I - K) V on the row space: diag(v^2) - s s' with s_t = sqrt(n_t) v_t^(3/2) x_t
        s = xj * (np.sqrt(nj) * vj**1.5)[:, None]
        inverse_root = _inverse_sqrt(np.diag(vj**2) - s @ bread @ s.T)
        e = (xj * (np.sqrt(nj) * np.sqrt(vj))[:, None]).T @ inverse_root * np.sqrt(vj)[None, :]  # E_j (p x g)
        components[index] = e @ (summed[rows] / np.sqrt(nj))
        gg[index] = bread @ (e * vj[None, :]) @ e.T @ bread
        hh[index] = bread @ e @ (xj * (vj * np.sqrt(nj))[:, None]) @ lower
    return gg, hh, components


def _judge_design_effect(scores: np.ndarray, judges: np.ndarray, vignettes: np.ndarray, bread: np.ndarray):
    """max(1, V_J / V_JV) per coefficient: vcovCL's HC0 over judges and over judge x vignette cells."""
    p = bread.shape[0]
    if p == 0 or len(scores) == 0:
        return np.ones(p)

    def variance(labels: np.ndarray) -> np.ndarray:
        groups = codes(labels)
        count = int(groups.max()) + 1
        # Per column, bincount adds in the same order as np.add.at, several times faster.
        sums = np.stack([np.bincount(groups, scores[:, c], minlength=count) for c in range(p)], axis=1)
        adjust = count / (count - 1) if count > 1 else 1.0
        return np.diag(bread @ (adjust * sums.T @ sums) @ bread)

    by_judge = variance(judges)
    by_cell = variance(judges * (int(vignettes.max()) + 1) + vignettes)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(by_cell > 0, by_judge / by_cell, 1.0)
    return np.maximum(1.0, np.nan_to_num(ratio, nan=1.0, posinf=1.0))


def _satterthwaite(c: np.ndarray, gg: np.ndarray, hh: np.ndarray) -> float:
    """Satterthwaite df of contrast c (clubSandwich's: 2 E^2 / V with P = diag(c'G_jG_j'c) - (c'H_j)(c'H_k)')."""
    if len(gg) == 0:
        return math.nan
    g = np.einsum("i,jik,k->j", c, gg, c)
    h = np.einsum("i,jik->jk", c, hh)
    pmat = np.diag(g) - h @ h.T
    denominator = float(np.sum(pmat**2))
    return float(np.trace(pmat) ** 2 / denominator) if denominator > 0 else math.nan


def _t_test(estimate: float, se: float, df: float, level: float) -> tuple[float, float, float, float]:
    t = estimate / se
    critical = float(stats.t.ppf(0.5 + level / 2, df))
    return t, float(2 * stats.t.sf(abs(t), df)), estimate - critical * se, estimate + critical * se


def _inverse_sqrt(matrix: np.ndarray) -> np.ndarray:
    """matrix^(-1/2) with eigenvalues at or below 1e-12 dropped (clubSandwich's matrix_power)."""
    values, vectors = np.linalg.eigh(matrix)
    powered = np.where(values > 1e-12, np.abs(values) ** -0.5, 0.0)
    return (vectors * powered) @ vectors.T


def _cholesky_lower(matrix: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:  # singular information: the pseudo-inverse's square root serves the same sums
        values, vectors = np.linalg.eigh(matrix)
        return vectors * np.sqrt(np.clip(values, 0.0, None))


def _finite(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None
