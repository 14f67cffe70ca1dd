"""Power of the reported tests when the human judgments are combined with an LLM judge by PPI++.

What one human judgment is worth beside a judge
-----------------------------------------------
PPI++ for a mean, with n labelled rows (human label Y, judge prediction Yhat) and N unlabelled rows (Yhat only):

    theta = mean_n(Y) + lam * (mean_N(Yhat_u) - mean_n(Yhat))
    Var   = (s_Y^2 - 2 lam c + lam^2 s_hat^2) / n + lam^2 s_hat^2 / N        (c = Cov(Y, Yhat))

is smallest at lam* = c / ((1 + n / N) s_hat^2), where it equals

    Var* = s_Y^2 / n * (1 - rho^2 * N / (N + n)),        rho = Corr(Y, Yhat).

So n human judgments beside N judged cells are worth  n_eff = n / (1 - rho^2 * N / (N + n))  human judgments
alone. Bradley-Terry is a logistic regression without intercept (llm_judging/ppi.py); the same algebra applies to
its gradients g = x (p - Y) and g_hat = x (p - Yhat): when the judge correlates equally with the human label on
every pair, their covariance matrices are proportional, the sandwich covariance shrinks by the same factor and so
does every test's variance. ppi.py tunes one lam for all coordinates ("overall"), which is then this lam*.
lam is clipped to [0, 1]: a judge that correlates negatively gets lam = 0, i.e. no saving (not a gain), so
rho is taken as max(rho, 0). A judge on only the human cells (N = cells, n = repetitions x cells) saves little:
N / (N + n) = 1 / (1 + repetitions). The savings come from judging many more cells than the humans do.

Which correlation. At the true abilities the gradient's mean given the pair is zero, so only the part of the
human label that varies *within* a system pair counts: a judge that knows only which system is better on
average is worth nothing, and so is any judge when human picks on a pair are coin flips around the abilities
(no cell has a majority of its own). A two-point model links rho to the agreements the LLM-judges page reports:
each cell has a side most humans favour; a human picks it with probability h (human agreement with the cell's
majority) and, independently given the cell, the judge with probability a (judge agreement with the majority).
With balanced sides each pick has variance 1/4 and Cov = (2h - 1)(2a - 1) / 4, so

    rho = (2h - 1)(2a - 1).

a = 0.5 (chance) or h = 0.5 gives rho = 0 and no saving. Both agreements as measured are conservative: the
judge is scored against the observed majority of a few humans (itself sometimes wrong), and a human against
the majority of the others on the cell. One judge pick per cell is assumed; the share over both orders can
only correlate better. tests/analysis/test_power_judge.py checks n_eff against ppi.py's intervals on
simulated data from this model.

Caveat carried from ppi.py: its interval treats human judgments as independent; with several humans on one cell
they share the cell's prediction, so a planned study should judge many cells with few humans each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .reported import ReportedPowerResult, reported_power

DEFAULT_HUMAN_AGREEMENT = 0.75  # an assumption until the study's own humans have judged: replace with theirs


def judge_correlation(*, judge_agreement: float, human_agreement: float) -> float:
    """rho between one judge pick and one human pick on a cell (two-point model), negative counted as 0."""
    for name, value in (("judge agreement", judge_agreement), ("human agreement", human_agreement)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"the {name} is a share between 0 and 1, not {value}.")
    return max((2 * human_agreement - 1) * (2 * judge_agreement - 1), 0.0)


def variance_factor(*, rho: float, n_human: float, llm_cells: int) -> float:
    """Var(PPI++) / Var(humans alone) with the power-tuned lam: 1 - rho^2 N / (N + n)."""
    rho = max(rho, 0.0)
    return 1.0 - rho**2 * llm_cells / (llm_cells + n_human) if llm_cells > 0 else 1.0


def effective_human_judgments(*, n_human: float, llm_cells: int, rho: float) -> float:
    """The human judgments alone that would be as precise as n_human beside llm_cells judged cells."""
    return n_human / variance_factor(rho=rho, n_human=n_human, llm_cells=llm_cells)


def human_judgments_needed(*, n_alone: float, llm_cells: int, rho: float) -> float:
    """The human judgments n beside the judge worth n_alone: the root of n (N + n) = n_alone (N + n - rho^2 N)."""
    r2, big_n = max(rho, 0.0) ** 2, llm_cells
    b = big_n - n_alone
    return (-b + math.sqrt(b * b + 4 * n_alone * big_n * (1 - r2))) / 2


@dataclass(frozen=True)
class JudgePowerResult:
    """Reported-test power without and with the judge, and the human judges each needs for a target."""

    rho: float
    judge_agreement: float | None  # None when rho was measured directly
    human_agreement: float | None
    llm_cells: int
    human_judgments: int  # per question, the design's
    worth_human_judgments: float  # what those are worth beside the judge
    without: ReportedPowerResult
    with_judge_power: float
    with_judge_mc_se: float
    target_power: float | None
    repetitions_needed_alone: int | None
    judgments_needed_alone: int | None
    judgments_needed_with_judge: int | None
    repetitions_needed_with_judge: int | None
    participants_needed_alone: int | None
    participants_needed_with_judge: int | None

    @property
    def saving(self) -> float | None:
        """Share of the human judgments the judge saves at the target (0 for a useless judge)."""
        if not self.judgments_needed_alone or self.judgments_needed_with_judge is None:
            return None
        return 1 - self.judgments_needed_with_judge / self.judgments_needed_alone

    @property
    def saving_percent(self) -> int | None:
        return None if self.saving is None else round(100 * self.saving)

    def as_dict(self) -> dict:
        values = dict(self.__dict__)
        values["without"] = self.without.as_dict()
        values["saving"] = self.saving
        return values


def judge_assisted_power(
    *,
    llm_cells: int | None = None,
    judge_agreement: float | None = None,
    human_agreement: float = DEFAULT_HUMAN_AGREEMENT,
    rho: float | None = None,
    target_power: float | None = 0.8,
    vignettes_per_participant: int = 5,
    **design,
) -> JudgePowerResult:
    """Reported-test power of `design` (reported_power's arguments) by humans alone and beside a judge.

    Give `judge_agreement` (with `human_agreement`) or a measured `rho`. `llm_cells` defaults to the design's
    cells (every pair on every vignette). With the judge, the data are simulated at n_eff human judgments."""
    if rho is None:
        if judge_agreement is None:
            raise ValueError("give the judge's agreement with the human majority, or a measured rho.")
        rho = judge_correlation(judge_agreement=judge_agreement, human_agreement=human_agreement)
    rho = max(float(rho), 0.0)
    without = reported_power(vignettes_per_participant=vignettes_per_participant, **design)
    cells = without.comparisons // without.repetitions
    llm_cells = cells if llm_cells is None else llm_cells
    if llm_cells < 0:
        raise ValueError("the number of LLM-judged cells cannot be negative.")
    n_human = without.comparisons
    worth = effective_human_judgments(n_human=n_human, llm_cells=llm_cells, rho=rho)
    with_judge = reported_power(
        vignettes_per_participant=vignettes_per_participant, judgment_scale=worth / n_human, **design
    )
    needed = without.repetitions_needed_for(target_power) if target_power is not None else None
    alone = needed * cells if needed is not None else None
    beside = (
        math.ceil(human_judgments_needed(n_alone=alone, llm_cells=llm_cells, rho=rho) - 1e-9)
        if alone is not None
        else None
    )
    return JudgePowerResult(
        rho=rho,
        judge_agreement=judge_agreement,
        human_agreement=human_agreement if judge_agreement is not None else None,
        llm_cells=llm_cells,
        human_judgments=n_human,
        worth_human_judgments=worth,
        without=without,
        with_judge_power=with_judge.power,
        with_judge_mc_se=with_judge.mc_se,
        target_power=target_power,
        repetitions_needed_alone=needed,
        judgments_needed_alone=alone,
        judgments_needed_with_judge=beside,
        repetitions_needed_with_judge=math.ceil(beside / cells) if beside is not None else None,
        participants_needed_alone=math.ceil(alone / vignettes_per_participant) if alone is not None else None,
        participants_needed_with_judge=(math.ceil(beside / vignettes_per_participant) if beside is not None else None),
    )
