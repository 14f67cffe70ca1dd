"""The study's design for the PPI coverage check: 7 systems, 12 vignettes, every pair on every vignette judged
by 8 humans, answers whose quality departs from their system's ability (answer SD), an LLM judge on the
humans' cells (1x) or on ten times as many cells (10x: the humans' 12 vignettes and 108 more).

A human picks answer_a with probability expit(ability_a - ability_b + u_a - u_b), u the answer's own quality
(one answer per system and vignette, so every cell of a vignette shares its answers). The judge reads the
same answers: logit scale * (that difference) + its own noise per cell, with a position bias, once in each
order, so its share per cell is 0, 0.5 or 1. Participants carry no effect of their own here.

The estimand is the population Bradley-Terry fit (logistic, no intercept) over cells from new vignettes,
computed once on a large draw: what the study's abilities mean when answers vary.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np
from scipy.special import expit

from llm_judging import ppi

ABILITIES = np.linspace(0.0, 0.4, 7)  # the seed's 0.4 gap, the reference (worst) first
PAIRS = np.array(list(combinations(range(len(ABILITIES)), 2)))


@dataclass(frozen=True)
class StudyDesign:
    vignettes: int = 12
    humans_per_cell: int = 8
    judge_multiple: int = 1  # the judge's cells as a multiple of the humans'
    answer_sd: float = 0.6
    judge_scale: float = 1.0
    judge_noise: float = 0.5
    judge_position: float = 0.3


def _cells(rng, vignettes: int, answer_sd: float):
    """(first, second, vignette, true log-odds) for every pair on every vignette."""
    quality = ABILITIES + rng.normal(0.0, answer_sd, (vignettes, len(ABILITIES)))
    vignette = np.repeat(np.arange(vignettes), len(PAIRS))
    first, second = np.tile(PAIRS[:, 0], vignettes), np.tile(PAIRS[:, 1], vignettes)
    return first, second, vignette, quality[vignette, first] - quality[vignette, second]


@lru_cache(maxsize=8)
def estimand(answer_sd: float) -> np.ndarray:
    first, second, _v, diff = _cells(np.random.default_rng(2024), 40_000, answer_sd)
    X, p = ppi.design(first, second, len(ABILITIES), 0), expit(diff)
    return ppi.point_estimate(X, p, p, X, p, lam=0.0)


def simulate(rng, d: StudyDesign) -> dict:
    """Labelled rows (X, Y, Yhat, clusters) and unlabelled rows (Xu, Yhat_u, clusters_u), clusters = vignettes."""
    first, second, vignette, diff = _cells(rng, d.vignettes * d.judge_multiple, d.answer_sd)
    judged = d.judge_scale * diff + rng.normal(0.0, d.judge_noise, len(diff))
    share = (
        (rng.random(len(diff)) < expit(judged + d.judge_position)).astype(float)
        + (rng.random(len(diff)) < expit(judged - d.judge_position))
    ) / 2
    human_cells = np.repeat(np.flatnonzero(vignette < d.vignettes), d.humans_per_cell)
    Xu = ppi.design(first, second, len(ABILITIES), 0)
    Y = (rng.random(len(human_cells)) < expit(diff[human_cells])).astype(float)
    return dict(
        X=Xu[human_cells],
        Y=Y,
        Yhat=share[human_cells],
        clusters=vignette[human_cells],
        Xu=Xu,
        Yhat_u=share,
        clusters_u=vignette,
    )


def intervals(data: dict) -> dict[str, ppi.PPIResult]:
    """The three intervals compared: PPI++ as ppi-python (rows independent), PPI++ and humans vignette-clustered."""
    labelled = (data["X"], data["Y"], data["Yhat"], data["Xu"], data["Yhat_u"])
    return {
        "ppi_independent": ppi.ppi_logistic(*labelled),
        "ppi_clustered": ppi.ppi_logistic(*labelled, clusters=data["clusters"], clusters_u=data["clusters_u"]),
        "human_clustered": ppi.classical_logistic(data["X"], data["Y"], clusters=data["clusters"]),
    }


def coverage(d: StudyDesign, *, reps: int, seed: int) -> dict[str, dict[str, float]]:
    """Per interval kind: coverage (mean over systems), the worst system's, mean width, mean lambda."""
    rng, truth = np.random.default_rng(seed), estimand(d.answer_sd)
    hits, widths, lams = {}, {}, {}
    for _ in range(reps):
        for kind, result in intervals(simulate(rng, d)).items():
            hits.setdefault(kind, []).append((result.ci_low <= truth) & (truth <= result.ci_high))
            widths.setdefault(kind, []).append(np.mean(result.ci_high - result.ci_low))
            lams.setdefault(kind, []).append(result.lam)
    return {
        kind: {
            "coverage": float(np.mean(hits[kind])),
            "worst_system": float(np.min(np.mean(hits[kind], axis=0))),
            "width": float(np.mean(widths[kind])),
            "lambda": float(np.mean(lams[kind])),
        }
        for kind in hits
    }
