"""Fast approximations of the reported tests' power (`--interval wald|answer-robust`), used by the PPI judge
planning (judge.py). The dashboard's own test is simulated by reported_test.py (`--test reported`'s default).

The dashboard tests every system against the reference system, per question, and adjusts the
p-values with Holm within the question. So does this simulation: every unordered pair of
systems on every vignette, `repetitions` judgments each; abilities relative to the reference
(the first); optionally answers that differ in quality beyond their system's ability (the
answer of system k on vignette v shifts it by u_vk ~ N(0, answer_sd^2)). Each simulated data
set is fitted by maximum likelihood and each system gets a two-sided test against the
reference, either

- "wald": a Wald test (model-based SE, normal reference), a fast approximation that is NOT the
  dashboard's test (reported_test.py simulates that one) and ignores answer-level variation: with
  answer_sd > 0 it rejects true nulls too often; or
- "answer-robust": the vignette-clustered sandwich SE (answers cluster a comparison by its
  vignette; judges are independent in the simulation, so the judge terms of the two-way
  sandwich cancel in expectation) with a t(vignettes - 1) reference, as `cluster_robust` does.

Holm runs over the (systems - 1) tests of one question at alpha / questions (`questions` > 1
Bonferroni-corrects across questions, as the best-vs-worst figure does). `power` is the mean,
over the systems with a true effect, of the probability that the system is found different
from the reference; `per_system` gives each one, and `false_positive_rate` the probability that
some system without a true effect is declared different.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from analysis import bradley_terry as bt

from .design import abilities_for, check_design, fixed_seed, participants_needed, smallest_repetitions

INTERVALS = ("wald", "answer-robust")
CHUNK = 2000  # simulated data sets fitted as one Newton batch


@dataclass(frozen=True)
class ReportedPowerResult:
    power: float  # mean over systems with a true effect of the per-system power
    mc_se: float
    per_system: list[float]  # systems 1.. (the reference, system 0, is not tested)
    effects: list[float]  # true ability of each system minus the reference's
    any_detected: float  # some system with a true effect found different
    all_detected: float  # every system with a true effect found different
    false_positive_rate: float | None  # some system without a true effect declared different
    simulations: int
    failed: int  # data sets with an infinite ability (counted as no rejection)
    systems: int
    vignettes: int
    repetitions: int
    answer_sd: float
    interval: str
    alpha: float
    questions: int
    alpha_per_question: float
    comparisons: int  # judgments per question
    participants: int  # judges needed at vignettes_per_participant cells each
    seed: int | None
    test: str = "reported"

    def repetitions_needed_for(self, target: float, *, max_repetitions: int = 200) -> int | None:
        """Smallest repetitions per cell at which `power` reaches `target` under the same assumptions."""
        seed = fixed_seed(self.seed)

        def reaches(repetitions: int) -> bool:
            result = reported_power(
                abilities=[0.0, *self.effects],
                vignettes=self.vignettes,
                repetitions=repetitions,
                answer_sd=self.answer_sd,
                interval=self.interval,
                alpha=self.alpha,
                questions=self.questions,
                simulations=self.simulations,
                seed=seed,
            )
            return result.power >= target

        return smallest_repetitions(reaches, max_repetitions)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def reported_power(
    *,
    vignettes: int,
    repetitions: int,
    abilities: Sequence[float] | None = None,
    systems: int = 7,
    gap: float = 0.4,
    spacing: str = "even",
    answer_sd: float = 0.0,
    interval: str = "wald",
    alpha: float = 0.05,
    questions: int = 1,
    simulations: int = 1000,
    seed: int | None = None,
    vignettes_per_participant: int = 5,
    judgment_scale: float = 1.0,
) -> ReportedPowerResult:
    """Simulated power of the per-system tests against the reference (Holm within a question).

    `abilities` (the reference first) overrides `systems`, `gap` and `spacing`, which otherwise
    put the reference at 0 and the others evenly up to `gap` ("even") or one at `gap` ("one-best").
    `judgment_scale` simulates that many times the design's judgments (rounded per pair, or per cell
    with answer variation): the human-alone equivalent of a design helped by an LLM judge (judge.py).
    The result still describes the design's own judgments and judges."""
    _check_inputs(interval=interval, answer_sd=answer_sd, judgment_scale=judgment_scale)
    truth = abilities_for(systems, gap, spacing) if abilities is None else np.asarray(abilities, float)
    truth = truth - truth[0]
    check_design(len(truth), vignettes, repetitions, simulations, questions)
    if interval == "answer-robust" and vignettes < 2:
        raise ValueError("answer-robust tests need at least two vignettes.")
    alpha_per_question = alpha / questions
    rejected, failed = _simulated_rejections(
        truth,
        simulations=simulations,
        rng=np.random.default_rng(seed),
        vignettes=vignettes,
        repetitions=repetitions,
        answer_sd=answer_sd,
        interval=interval,
        alpha=alpha_per_question,
        judgment_scale=judgment_scale,
    )
    cells = len(truth) * (len(truth) - 1) // 2 * vignettes
    summary = _summary(rejected, truth)
    return ReportedPowerResult(
        **summary,
        failed=failed,
        systems=len(truth),
        vignettes=vignettes,
        repetitions=repetitions,
        answer_sd=answer_sd,
        interval=interval,
        alpha=alpha,
        questions=questions,
        alpha_per_question=alpha_per_question,
        comparisons=cells * repetitions,
        participants=participants_needed(cells * repetitions, vignettes_per_participant),
        seed=seed,
    )


def _check_inputs(*, interval: str, answer_sd: float, judgment_scale: float) -> None:
    if judgment_scale <= 0:
        raise ValueError("the judgment scale must be positive.")
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(INTERVALS)}, not {interval!r}.")
    if answer_sd < 0:
        raise ValueError("the answer-level SD cannot be negative.")


def _simulated_rejections(
    truth: np.ndarray, *, simulations: int, rng: np.random.Generator, **design
) -> tuple[np.ndarray, int]:
    """(simulations, systems - 1) rejections and the failed data sets, CHUNK data sets at a time."""
    rejected, failed = [], 0
    for start in range(0, simulations, CHUNK):
        chunk_rejected, chunk_failed = _rejections(truth, size=min(CHUNK, simulations - start), rng=rng, **design)
        rejected.append(chunk_rejected)
        failed += chunk_failed
    return np.concatenate(rejected), failed


def _rejections(
    truth: np.ndarray,
    *,
    vignettes: int,
    repetitions: int,
    answer_sd: float,
    interval: str,
    alpha: float,
    size: int,
    rng: np.random.Generator,
    judgment_scale: float = 1.0,
) -> tuple[np.ndarray, int]:
    """(size, systems - 1) rejections of each system = reference, Holm-adjusted within a data set."""
    n_items = len(truth)
    a, b = np.triu_indices(n_items, k=1)
    grouped = bt.Grouped(a, b, np.zeros((len(a), 0)), np.zeros(len(a)), np.zeros(len(a)), None)
    per_vignette = interval == "answer-robust" or answer_sd > 0
    if per_vignette:
        repetitions = max(round(repetitions * judgment_scale), 1)
        answers = (
            rng.normal(0.0, answer_sd, size=(size, vignettes, n_items)) if answer_sd > 0 else np.zeros((1, 1, n_items))
        )
        eta = (truth[a] - truth[b]) + answers[..., a] - answers[..., b]
        cell_wins = rng.binomial(repetitions, 1.0 / (1.0 + np.exp(-np.broadcast_to(eta, (size, vignettes, len(a))))))
        wins = cell_wins.sum(axis=1).astype(float)
        per_pair = vignettes * repetitions
    else:
        per_pair = max(round(vignettes * repetitions * judgment_scale), 1)
        wins = rng.binomial(per_pair, 1.0 / (1.0 + np.exp(-(truth[a] - truth[b]))), size=(size, len(a)))
        wins = wins.astype(float)
    totals = np.full(len(a), float(per_pair))
    item_wins, item_losses = bt.item_wins_and_losses(grouped, wins, totals[None, :], n_items)
    finite = ((item_wins > 0) & (item_losses > 0)).all(axis=1)  # else an ability is infinite
    rejected = np.zeros((size, n_items - 1), bool)
    if not finite.any():
        return rejected, int(size)
    batch = bt.fit_batch(
        grouped, n_items, reference=0, wins=wins[finite], totals=np.broadcast_to(totals, wins[finite].shape)
    )
    covariance = np.linalg.inv(batch.information)  # free columns: the systems 1..k-1
    if interval == "answer-robust":
        prob = 1.0 / (1.0 + np.exp(-(batch.theta[:, a] - batch.theta[:, b])))
        residual = cell_wins[finite] - repetitions * prob[:, None, :]  # (sets, vignettes, pairs)
        design = np.zeros((len(a), n_items))
        design[np.arange(len(a)), a], design[np.arange(len(a)), b] = 1.0, -1.0
        scores = residual @ design[:, 1:]  # per vignette, over the free columns
        meat = vignettes / (vignettes - 1) * np.einsum("rvi,rvj->rij", scores, scores)
        covariance = covariance @ meat @ covariance
        reference = stats.t(vignettes - 1)
    else:
        reference = stats.norm
    se = np.sqrt(np.clip(np.diagonal(covariance, axis1=1, axis2=2), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = 2 * reference.sf(np.abs(batch.theta[:, 1:] / se))
    p = np.where(batch.converged[:, None] & (se > 0), p, 1.0)
    rejected[finite] = _holm_rejects(p, alpha)
    return rejected, int((~finite).sum())


def _holm_rejects(p: np.ndarray, alpha: float) -> np.ndarray:
    """Row by row: which hypotheses Holm's step-down procedure rejects at `alpha`."""
    m = p.shape[1]
    order = np.argsort(p, axis=1, kind="stable")
    stepped = np.maximum.accumulate(np.take_along_axis(p, order, axis=1) * (m - np.arange(m)), axis=1)
    rejects = np.zeros_like(p, dtype=bool)
    np.put_along_axis(rejects, order, stepped <= alpha, axis=1)
    return rejects


def _summary(rejected: np.ndarray, truth: np.ndarray) -> dict:
    """Power figures from the (simulations, systems - 1) rejections."""
    effects = truth[1:]
    real = effects != 0
    detected_share = rejected[:, real].mean(axis=1) if real.any() else np.full(len(rejected), np.nan)
    simulations = len(rejected)
    return {
        "power": float(detected_share.mean()),
        "mc_se": float(detected_share.std(ddof=1) / math.sqrt(simulations)) if simulations > 1 else math.nan,
        "per_system": [float(value) for value in rejected.mean(axis=0)],
        "effects": [float(value) for value in effects],
        "any_detected": float(rejected[:, real].any(axis=1).mean()) if real.any() else math.nan,
        "all_detected": float(rejected[:, real].all(axis=1).mean()) if real.any() else math.nan,
        "false_positive_rate": float(rejected[:, ~real].any(axis=1).mean()) if (~real).any() else None,
        "simulations": simulations,
    }
