"""Power of the reported tests when the human judgments are combined with an LLM judge by PPI++.

What one human judgment is worth beside a judge (docs/statistics-ppi.md)
-----------------------------------------------------------------------
Judgments on one cell are correlated (the humans on a cell share its answers), so the valid PPI++ variance
(llm_judging/ppi.py, clustered) takes the cell as the unit. With C human cells, m humans on each (cell mean
Y_c), and the judge's pick Yhat_c on N >= C cells that include the humans', PPI++ for a mean is

    theta = mean_C(Y_c) + lam * (mean_N(Yhat) - mean_C(Yhat_c))
    Var   = s_Y^2 / C - 2 lam c (1/C - 1/N) + lam^2 s_hat^2 (1/C - 1/N)        (c = Cov(Y_c, Yhat_c))

smallest at lam* = c / s_hat^2, where it is the humans' own variance times

    1 - rho_cell^2 (1 - C / N),        rho_cell = Corr(Y_c, Yhat_c).

A judge on exactly the humans' cells (N = C) saves nothing whatever its agreement: its picks enter with and
against themselves and cancel. The saving comes only from cells no human judged. Bradley-Terry is a logistic
regression without intercept; the same algebra applies to its gradients, within each system pair.

Which correlation. At the true abilities only the part of a human pick that varies *within* a system pair can be
predicted. A two-point model links it to the agreements the LLM-judges page reports: each cell has a side most
humans favour; a human picks it with probability h (agreement with the cell's majority), the judge with
probability a. Per pick rho = (2h - 1)(2a - 1); the cell's own signal is the share r = (2h - 1)^2 of a human
pick's variance (the rest is the humans' disagreement), so the mean of m humans has variance share
r + (1 - r) / m and

    rho_cell^2 = rho^2 / (r + (1 - r) / m),   rho^2 capped at r (no judge predicts more than the cell's signal).

h = 0.5 (humans on a cell are coin flips) gives r = 0: nothing to predict, no saving from any judge. A measured
rho (the power page's measured judge) is a per-pick correlation and goes through the same formula with the
humans' agreement. Both agreements as measured are conservative (scored against the observed majority of a few
humans). tests/analysis/test_power_judge.py checks the factor against ppi.py's clustered intervals.
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


def cell_correlation(*, rho: float, human_agreement: float, repetitions: int) -> float:
    """rho_cell: the judge's pick against the mean of `repetitions` humans on the cell (module docstring)."""
    signal = (2 * human_agreement - 1) ** 2
    rho2 = min(max(rho, 0.0) ** 2, signal)
    return math.sqrt(rho2 / (signal + (1 - signal) / repetitions)) if rho2 > 0 else 0.0


def variance_factor(*, rho_cell: float, human_cells: int, llm_cells: int) -> float:
    """Var(PPI++) / Var(humans alone), power-tuned and cell-clustered: 1 - rho_cell^2 (1 - C / N)."""
    extra_share = max(0.0, 1.0 - human_cells / llm_cells) if llm_cells > 0 else 0.0
    return 1.0 - min(rho_cell, 1.0) ** 2 * extra_share


def repetitions_needed_with_judge(
    *, repetitions_alone: int, rho: float, human_agreement: float, human_cells: int, llm_cells: int
) -> int:
    """The fewest humans per cell m worth `repetitions_alone` beside the judge: m / factor(m) >= that."""
    for m in range(1, repetitions_alone + 1):
        rho_cell = cell_correlation(rho=rho, human_agreement=human_agreement, repetitions=m)
        if m / variance_factor(rho_cell=rho_cell, human_cells=human_cells, llm_cells=llm_cells) >= repetitions_alone:
            return m
    return repetitions_alone


@dataclass(frozen=True)
class JudgePowerResult:
    """Reported-test power without and with the judge, and the human judges each needs for a target."""

    rho: float  # per pick
    rho_cell: float  # the judge's pick against the mean of the design's humans on a cell
    judge_agreement: float | None  # None when rho was measured directly
    human_agreement: float
    human_cells: int
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
    def extra_cells(self) -> int:
        """Cells the judge judges beyond the humans': where any saving comes from."""
        return max(self.llm_cells - self.human_cells, 0)

    @property
    def saving(self) -> float | None:
        """Share of the human judgments the judge saves at the target (0 for a useless judge)."""
        if not self.judgments_needed_alone or self.judgments_needed_with_judge is None:
            return None
        return 1 - self.judgments_needed_with_judge / self.judgments_needed_alone

    @property
    def saving_percent(self) -> int | None:
        return None if self.saving is None else round(100 * self.saving)

    @property
    def why_no_saving(self) -> str | None:
        """Why this judge cannot help this design, in words; None when it can."""
        if self.extra_cells == 0:
            return (
                f"the judge covers only the humans' {self.human_cells} cells: its picks on them enter with and "
                "against themselves and cancel, so PPI++ is the humans' estimate. Only cells no human judges help"
            )
        if self.human_agreement <= 0.5:
            return (
                f"humans agree with their cell's majority {self.human_agreement:.2f} of the time, as coin flips "
                "would: no cell has a side of its own for a judge to predict"
            )
        if self.rho_cell <= 0:
            return "the judge agrees with the human majority no better than chance"
        return None

    def as_dict(self) -> dict:
        values = dict(self.__dict__)
        values["without"] = self.without.as_dict()
        values.update(saving=self.saving, extra_cells=self.extra_cells, why_no_saving=self.why_no_saving)
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

    Give `judge_agreement` (with `human_agreement`) or a measured per-pick `rho` (with the humans' agreement).
    `llm_cells` defaults to the design's cells, which saves nothing. With the judge, the data are simulated at
    the human judgments they are worth."""
    rho = _per_pick_rho(rho, judge_agreement, human_agreement)
    without = reported_power(vignettes_per_participant=vignettes_per_participant, **design)
    cells = without.comparisons // without.repetitions
    llm_cells = cells if llm_cells is None else llm_cells
    if llm_cells < 0:
        raise ValueError("the number of LLM-judged cells cannot be negative.")
    shape = dict(rho=rho, human_agreement=human_agreement)
    rho_cell = cell_correlation(repetitions=without.repetitions, **shape)
    factor = variance_factor(rho_cell=rho_cell, human_cells=cells, llm_cells=llm_cells)
    n_human = without.comparisons
    with_judge = reported_power(
        vignettes_per_participant=vignettes_per_participant, judgment_scale=1 / factor, **design
    )
    needed = without.repetitions_needed_for(target_power) if target_power is not None else None
    beside = (
        repetitions_needed_with_judge(repetitions_alone=needed, human_cells=cells, llm_cells=llm_cells, **shape)
        if needed is not None
        else None
    )
    alone_n, beside_n = (m * cells if m is not None else None for m in (needed, beside))
    return JudgePowerResult(
        rho=rho,
        rho_cell=rho_cell,
        judge_agreement=judge_agreement,
        human_agreement=human_agreement,
        human_cells=cells,
        llm_cells=llm_cells,
        human_judgments=n_human,
        worth_human_judgments=n_human / factor,
        without=without,
        with_judge_power=with_judge.power,
        with_judge_mc_se=with_judge.mc_se,
        target_power=target_power,
        repetitions_needed_alone=needed,
        judgments_needed_alone=alone_n,
        judgments_needed_with_judge=beside_n,
        repetitions_needed_with_judge=beside,
        participants_needed_alone=_participants(alone_n, vignettes_per_participant),
        participants_needed_with_judge=_participants(beside_n, vignettes_per_participant),
    )


def _per_pick_rho(rho: float | None, judge_agreement: float | None, human_agreement: float) -> float:
    if rho is None:
        if judge_agreement is None:
            raise ValueError("give the judge's agreement with the human majority, or a measured rho.")
        return judge_correlation(judge_agreement=judge_agreement, human_agreement=human_agreement)
    judge_correlation(judge_agreement=0.5, human_agreement=human_agreement)  # checks the share
    return max(float(rho), 0.0)


def _participants(judgments: int | None, per_participant: int) -> int | None:
    return math.ceil(judgments / per_participant) if judgments is not None else None
