"""Power of a pairwise-judging design to tell the best system from the worst (`--test best-vs-worst`).

The design: every unordered pair of `systems` on every one of `vignettes`, judged by
`repetitions` participants; each judgment is one binary pick per question. Abilities are
"even" (evenly spaced from 0 to `gap`) or "one-best" (all 0, one system at `gap`). Each
simulated data set is fitted by maximum likelihood (Bradley-Terry, worst system as the
reference) and the best-minus-worst difference gets a two-sided Wald test using the full
covariance. Power is the share of data sets where that test rejects.

Because the model has no vignette or judge effects, a pair's wins out of vignettes x
repetitions judgments are Binomial, so the simulation draws those counts directly.

Reproducing the source study's figure (85.6% power for 7 systems, 12 vignettes, 8
repetitions, a 0.4 log-odds gap between best and worst, alpha 0.05) needs one assumption the
study did not state: alpha is Bonferroni-corrected across the five questions, i.e. each
question's test is at 0.05 / 5 = 0.01 (`questions=5`). With even spacing that gives
0.854 (two runs of 200,000 simulations: 0.855 and 0.853, Monte Carlo SE 0.0008 each), and
"one-best" 0.855: the reported 0.856 is that figure to within its own simulation error. Without the correction (alpha 0.05 per question) the same design has about
96% power (even) or 95% (one-best); correcting over the six comparisons with the reference
instead gives 0.84, over all 21 pairs 0.73, so those do not match. Each judgment is one pick
on one question; pooling the five questions as five judgments would give power near 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from analysis import bradley_terry as bt

from .design import abilities_for, check_design, fixed_seed, participants_needed, smallest_repetitions


@dataclass(frozen=True)
class PowerResult:
    """Power of the best-vs-worst test (the paper's figure)."""

    power: float
    mc_se: float
    simulations: int
    failed: int  # simulated data sets with an infinite ability (counted as no rejection)
    systems: int
    vignettes: int
    repetitions: int
    gap: float
    spacing: str
    alpha: float
    questions: int
    alpha_per_test: float
    comparisons: int  # judgments per question
    participants: int  # judges needed at vignettes_per_participant cells each
    seed: int | None

    def repetitions_needed_for(self, target: float, *, max_repetitions: int = 200) -> int | None:
        """Smallest repetitions per cell reaching `target` power under the same assumptions."""
        return repetitions_needed(
            target,
            systems=self.systems,
            vignettes=self.vignettes,
            gap=self.gap,
            spacing=self.spacing,
            alpha=self.alpha,
            questions=self.questions,
            simulations=self.simulations,
            seed=self.seed,
            max_repetitions=max_repetitions,
        )

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def power_analysis(
    *,
    systems: int,
    vignettes: int,
    repetitions: int,
    gap: float,
    spacing: str = "even",
    alpha: float = 0.05,
    questions: int = 1,
    simulations: int = 1000,
    seed: int | None = None,
    vignettes_per_participant: int = 5,
) -> PowerResult:
    """Simulated power of the best-vs-worst Wald test; `questions` > 1 Bonferroni-corrects alpha."""
    check_design(systems, vignettes, repetitions, simulations, questions)
    abilities = abilities_for(systems, gap, spacing)
    per_pair = vignettes * repetitions
    alpha_per_test = alpha / questions
    rejected, failed = _simulate_rejections(abilities, per_pair, alpha_per_test, simulations, seed)
    power = rejected / simulations
    cells = systems * (systems - 1) // 2 * vignettes
    return PowerResult(
        power=power,
        mc_se=math.sqrt(power * (1 - power) / simulations),
        simulations=simulations,
        failed=failed,
        systems=systems,
        vignettes=vignettes,
        repetitions=repetitions,
        gap=gap,
        spacing=spacing,
        alpha=alpha,
        questions=questions,
        alpha_per_test=alpha_per_test,
        comparisons=cells * repetitions,
        participants=participants_needed(cells * repetitions, vignettes_per_participant),
        seed=seed,
    )


def _simulate_rejections(abilities, per_pair, alpha, simulations, seed) -> tuple[int, int]:
    """Rejections of best = worst over simulated data sets, and how many fits failed."""
    rng = np.random.default_rng(seed)
    n_items = len(abilities)
    first, second = np.triu_indices(n_items, k=1)
    totals = np.full(len(first), float(per_pair))
    prob = 1.0 / (1.0 + np.exp(-(abilities[first] - abilities[second])))
    wins = rng.binomial(per_pair, prob, size=(simulations, len(first))).astype(float)
    grouped = bt.Grouped(first, second, np.zeros((len(first), 0)), totals, totals, np.arange(len(first)))
    item_wins, item_losses = bt.item_wins_and_losses(grouped, wins, totals[None, :], n_items)
    finite = ((item_wins > 0) & (item_losses > 0)).all(axis=1)  # else an ability is infinite
    z = np.zeros(simulations)
    if finite.any():
        z[finite] = _best_vs_worst_z(grouped, wins[finite], totals, n_items)
    critical = stats.norm.ppf(1 - alpha / 2)
    return int(np.sum(np.abs(z) > critical)), int(np.sum(~finite))


def _best_vs_worst_z(grouped, wins, totals, n_items) -> np.ndarray:
    """Wald z of lambda_best - lambda_worst; with the worst as reference that is one coefficient."""
    batch = bt.fit_batch(grouped, n_items, reference=0, wins=wins, totals=np.broadcast_to(totals, wins.shape))
    covariance = np.linalg.inv(batch.information)
    best = n_items - 1
    column = int(np.flatnonzero(batch.free == best)[0])
    z = batch.theta[:, best] / np.sqrt(covariance[:, column, column])
    return np.where(batch.converged, z, 0.0)


def repetitions_needed(
    target_power: float,
    *,
    systems: int,
    vignettes: int,
    gap: float,
    spacing: str = "even",
    alpha: float = 0.05,
    questions: int = 1,
    simulations: int = 1000,
    seed: int | None = None,
    max_repetitions: int = 200,
) -> int | None:
    """Smallest repetitions per cell whose simulated power reaches `target_power` (None if
    even `max_repetitions` does not). Bisection: power rises with repetitions, and every
    candidate uses the same seed so that simulation noise does not break that order."""
    seed = fixed_seed(seed)

    def reaches(repetitions: int) -> bool:
        result = power_analysis(
            systems=systems,
            vignettes=vignettes,
            repetitions=repetitions,
            gap=gap,
            spacing=spacing,
            alpha=alpha,
            questions=questions,
            simulations=simulations,
            seed=seed,
        )
        return result.power >= target_power

    return smallest_repetitions(reaches, max_repetitions)
