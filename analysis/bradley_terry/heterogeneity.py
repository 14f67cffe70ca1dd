"""Do a system's results hold across vignettes? Tests of heterogeneity from per-vignette fits.

Two tests, because they answer two questions:

- Per system, Cochran's Q (a Wald chi-square test that its per-vignette estimates against the
  reference are equal): Q = sum_v w_v (b_v - b_pooled)^2, w_v = 1 / se_v^2, b_pooled the
  inverse-variance mean, on (vignettes - 1) degrees of freedom. It asks whether *this* system's
  advantage over the reference depends on the vignette, which is what a claim about the system
  needs; since every estimate is relative to the reference, the reference's own answers' ups and
  downs show in every system's Q. With it comes the DerSimonian-Laird between-vignette SD of the
  difference (about sqrt(2) x the answer-level SD tau when answers vary independently).
- Overall, the likelihood-ratio test of system x vignette interaction: 2 (sum_v log L_v -
  log L_pooled) on sum_v (k_v - 1) - (k - 1) degrees of freedom (k_v systems compared on v). It
  does not depend on the reference and needs no per-vignette SE, but it needs every per-vignette
  fit finite (with 8 judgments per pair and vignette, an item that never wins on a vignette is
  possible): otherwise it is left empty with the reason in `problems`.

Multiplicity: with six systems, six Q tests at 0.05 flag at least one system in about 23% of studies where
no system's advantage varies (the issue 19 filer's simulation), so each system's `p_holm` is Holm-adjusted
across the systems (family-wise error at most alpha under any dependence between the tests). The LR test is
a single test but its chi-square reference is approximate with few judgments per vignette: measured false
positives 0.067 at tau = 0 (nominal 0.05), so read an LR p just under 0.05 as weak evidence.

In R (BradleyTerry2): Q from `BTm(..., subset = vignette == v)` fits per vignette;
the LR as `anova(BTm(y, p1, p2, data = d), BTm(y, answer1, answer2, data = d))` with answers the
factor interaction(vignette, system), whose aliased columns R drops (one per vignette).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
from scipy import stats

from .diagnostics import holm
from .fitting import fit
from .results import _json_number


@dataclass(frozen=True)
class SystemHeterogeneity:
    """Cochran's Q for one system's per-vignette estimates against the reference."""

    item: str
    q: float
    df: int
    p: float
    pooled: float  # inverse-variance weighted mean of the per-vignette estimates
    between_sd: float  # DerSimonian-Laird SD of the true per-vignette differences (>= 0)
    n_vignettes: int  # vignettes where the estimate and its SE were finite
    p_holm: float = math.nan  # Holm across the systems' Q tests: flag a system only where this is small


@dataclass(frozen=True)
class HeterogeneityResult:
    systems: list[SystemHeterogeneity]  # every item but the reference, in item order
    lr: float | None  # likelihood ratio of system x vignette interaction
    lr_df: int | None
    lr_p: float | None
    n_vignettes: int
    problems: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "systems": [
                {key: _json_number(value) if isinstance(value, float) else value for key, value in s.__dict__.items()}
                for s in self.systems
            ],
            "lr": None if self.lr is None else _json_number(self.lr),
            "lr_df": self.lr_df,
            "lr_p": None if self.lr_p is None else _json_number(self.lr_p),
            "n_vignettes": self.n_vignettes,
            "problems": list(self.problems),
        }


def vignette_heterogeneity(
    winners: np.ndarray,
    losers: np.ndarray,
    n_items: int,
    *,
    reference: int,
    vignettes: np.ndarray,
    counts: np.ndarray | None = None,
    item_names: list[str] | None = None,
) -> HeterogeneityResult:
    """Per-system Q tests and the overall likelihood-ratio test (plain fits, no order effect)."""
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    vignettes = np.asarray(vignettes)
    names = list(item_names) if item_names is not None else [str(k) for k in range(n_items)]
    counts = None if counts is None else np.asarray(counts, float)
    pooled = fit(winners, losers, n_items, reference=reference, counts=counts, item_names=names)
    labels = np.unique(vignettes)
    estimates, ses, log_likelihood, parameters, problems = [], [], 0.0, 0, []
    for label in labels:
        rows = vignettes == label
        one = fit(
            winners[rows],
            losers[rows],
            n_items,
            reference=reference,
            counts=None if counts is None else counts[rows],
            item_names=names,
        )
        estimates.append(one.estimates)
        ses.append(one.se)
        if not one.converged:
            problems.append(f"Vignette {label}: {' '.join(one.problems)}")
        log_likelihood += one.log_likelihood
        parameters += int(((one.wins + one.losses) > 0).sum()) - 1
    systems = [
        _cochran(names[k], np.array([e[k] for e in estimates]), np.array([s[k] for s in ses]))
        for k in range(n_items)
        if k != reference
    ]
    adjusted = holm(np.array([system.p for system in systems], float))
    systems = [replace(system, p_holm=float(p)) for system, p in zip(systems, adjusted, strict=True)]
    lr = lr_df = lr_p = None
    if problems or not pooled.converged:
        problems.insert(0, "The likelihood-ratio test needs finite estimates on every vignette; it is left empty.")
    else:
        lr_df = parameters - (int(((pooled.wins + pooled.losses) > 0).sum()) - 1)
        lr = max(0.0, 2.0 * (log_likelihood - pooled.log_likelihood))
        lr_p = float(stats.chi2.sf(lr, lr_df)) if lr_df > 0 else math.nan
    return HeterogeneityResult(systems, lr, lr_df, lr_p, len(labels), problems)


def _cochran(name: str, estimates: np.ndarray, se: np.ndarray) -> SystemHeterogeneity:
    usable = np.isfinite(estimates) & np.isfinite(se) & (se > 0)
    b, weights = estimates[usable], 1.0 / se[usable] ** 2
    if len(b) < 2:
        return SystemHeterogeneity(name, math.nan, max(len(b) - 1, 0), math.nan, math.nan, math.nan, len(b))
    pooled = float(weights @ b / weights.sum())
    q = float(weights @ (b - pooled) ** 2)
    df = len(b) - 1
    scale = weights.sum() - (weights**2).sum() / weights.sum()
    between = math.sqrt(max(0.0, (q - df) / scale))
    return SystemHeterogeneity(name, q, df, float(stats.chi2.sf(q, df)), pooled, between, len(b))
