"""Simulated judging studies: every system pair on every vignette, judged by groups of judges.

Used by power analysis, coverage tests and benchmarks. Answers differ in quality beyond their
system's ability: the answer of system k on vignette v has effect u[v, k] ~ N(0, answer_sd^2),
so P(first beats second on v) = expit(l_first - l_second + u[v, first] - u[v, second] + delta).
An inattentive judge (a share `inattentive` of them) picks at random, whatever the answers:
P = 1/2. `first_wins_probability` is that rule, shared with the survey's simulated judges
(analysis/services/simulated_judges.py), so both simulate the same model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SimulatedJudgments:
    """One row per judgment; items are systems, judges and vignettes numbered from 0."""

    winners: np.ndarray
    losers: np.ndarray
    first: np.ndarray  # the item shown first
    judges: np.ndarray
    vignettes: np.ndarray
    answer_effects: np.ndarray  # (vignettes, systems)
    inattentive_judges: np.ndarray | None = None  # judge numbers who picked at random


def first_wins_probability(difference, *, order_effect: float = 0.0, attentive=True):
    """P(the answer shown first wins): expit(difference + order effect) for an attentive judge,
    1/2 for an inattentive one. `difference` = ability and answer effect of first minus second."""
    chance = 1.0 / (1.0 + np.exp(-(np.asarray(difference, float) + order_effect)))
    return np.where(attentive, chance, 0.5)


def simulate_judgments(
    abilities: np.ndarray,
    *,
    vignettes: int,
    repetitions: int,
    rng: np.random.Generator,
    per_judge: int = 5,
    answer_sd: float = 0.0,
    order_effect: float = 0.0,
    inattentive: float = 0.0,
) -> SimulatedJudgments:
    """`repetitions` judgments of every unordered system pair on every vignette, shown in a
    random order; consecutive judgments go to one judge, `per_judge` each, on different
    vignettes whenever per_judge <= vignettes. Each judge is inattentive with probability
    `inattentive` and then picks at random."""
    abilities = np.asarray(abilities, float)
    first_item, second_item = np.triu_indices(len(abilities), k=1)
    cells = len(first_item) * vignettes
    cell = np.repeat(np.arange(cells), repetitions)
    vignette = cell // len(first_item)
    pair = cell % len(first_item)
    # Deal the judgments round-robin over vignettes, so a judge's consecutive ones differ.
    rank = np.empty(len(cell), np.int64)
    for v in range(vignettes):
        rows = np.flatnonzero(vignette == v)
        rank[rows] = rng.permutation(len(rows))
    order = np.lexsort((rng.permutation(vignettes)[vignette], rank))
    vignette, pair = vignette[order], pair[order]
    swap = rng.random(len(pair)) < 0.5
    shown_first = np.where(swap, second_item[pair], first_item[pair])
    shown_second = np.where(swap, first_item[pair], second_item[pair])
    effects = rng.normal(0.0, answer_sd, size=(vignettes, len(abilities))) if answer_sd > 0 else None
    difference = abilities[shown_first] - abilities[shown_second]
    if effects is not None:
        difference += effects[vignette, shown_first] - effects[vignette, shown_second]
    judges = np.arange(len(pair)) // per_judge
    careless = None
    if inattentive > 0:
        careless = np.flatnonzero(rng.random(judges[-1] + 1) < inattentive) if len(judges) else np.array([], int)
    attentive = ~np.isin(judges, careless) if careless is not None else True
    first_wins = rng.random(len(pair)) < first_wins_probability(
        difference, order_effect=order_effect, attentive=attentive
    )
    return SimulatedJudgments(
        winners=np.where(first_wins, shown_first, shown_second),
        losers=np.where(first_wins, shown_second, shown_first),
        first=shown_first,
        judges=judges,
        vignettes=vignette,
        answer_effects=np.zeros((vignettes, len(abilities))) if effects is None else effects,
        inattentive_judges=careless,
    )
