"""How LLM judges agree with the human ones, and how they are biased, per question and judge model.

- agreement / kappa: each LLM pick against the human majority of its cell (cells with a tie are left out);
  Cohen's kappa on the two binary labels "answer_a won".
- human_agreement / human_kappa: the ceiling. A cell's human judges split at random into two halves, the
  two halves' majorities compared the same way (averaged over SPLITS random splits, fixed seed).
- position_consistency: of the (cell, sample) pairs judged in both orders, the share with the same answer
  picked both times. first_position_rate: the share of picks that went to the answer shown first.
- self_preference: the judge's own system is the study's LLM System whose model is the judge's model; on the
  cells where it meets another system and the human majority picked the other, how often the judge still
  picked its own. ``against_humans_elsewhere`` is the judge's disagreement rate on cells without its own system,
  the baseline to read it against.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from surveys.models import Study, System

from .data import HumanPick, JudgePick, StudyPicks, read_study_picks

SPLITS = 20


@dataclass(frozen=True)
class AgreementRow:
    question: str
    judge: str
    picks: int  # LLM picks compared with a human majority
    cells: int
    agreement: float | None
    kappa: float | None
    human_agreement: float | None
    human_kappa: float | None
    human_cells: int  # cells whose two halves both had a majority (mean over splits)
    position_consistency: float | None
    consistency_pairs: int
    first_position_rate: float | None
    self_preference: float | None
    self_preference_cases: int
    against_humans_elsewhere: float | None


def cohen_kappa(x: list[bool], y: list[bool]) -> float | None:
    if not x:
        return None
    a, b = np.asarray(x, float), np.asarray(y, float)
    observed = float(np.mean(a == b))
    expected = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    return None if expected >= 1 else (observed - expected) / (1 - expected)


def majority(picks: list[bool]) -> bool | None:
    wins = sum(picks)
    return None if 2 * wins == len(picks) else 2 * wins > len(picks)


def human_majorities(picks: list[HumanPick]) -> dict[int, bool]:
    by_cell = defaultdict(list)
    for pick in picks:
        by_cell[pick.cell].append(pick.a_won)
    return {cell: m for cell, votes in by_cell.items() if (m := majority(votes)) is not None}


def split_half_ceiling(picks: list[HumanPick], *, seed: int = 0) -> tuple[float | None, float | None, int]:
    by_cell = defaultdict(list)
    for pick in picks:
        by_cell[pick.cell].append(pick.a_won)
    rng = np.random.default_rng(seed)
    agreements, kappas, counts = [], [], []
    for _ in range(SPLITS):
        left, right = [], []
        for votes in by_cell.values():
            if len(votes) < 2:
                continue
            shuffled = [votes[i] for i in rng.permutation(len(votes))]
            m1, m2 = majority(shuffled[: len(votes) // 2]), majority(shuffled[len(votes) // 2 :])
            if m1 is not None and m2 is not None:
                left.append(m1)
                right.append(m2)
        if left:
            agreements.append(float(np.mean(np.equal(left, right))))
            kappa = cohen_kappa(left, right)
            if kappa is not None:
                kappas.append(kappa)
            counts.append(len(left))
    mean = lambda values: float(np.mean(values)) if values else None  # noqa: E731
    return mean(agreements), mean(kappas), round(mean(counts) or 0)


def own_systems(study: Study, model: str) -> set[str]:
    llm = study.systems.filter(kind=System.Kind.LLM).values_list("key", "model")
    return {key for key, system_model in llm if system_model and system_model == model}


def agreement_rows(*, study: Study, data: StudyPicks | None = None) -> list[AgreementRow]:
    """One row per question × judge model that judged this study."""
    data = data or read_study_picks(study=study)
    human = data.human_by_question()
    rows = []
    for question in data.questions:
        majorities = human_majorities(human.get(question, []))
        ceiling = split_half_ceiling(human.get(question, []))
        for judge in data.judges:
            picks = data.llm_by(question, judge.key)
            rows.append(
                judge_row(question, judge.key, picks, majorities, ceiling, data, own_systems(study, judge.model))
            )
    return rows


def judge_row(question, judge, picks: list[JudgePick], majorities, ceiling, data: StudyPicks, own: set[str]):
    compared = [p for p in picks if p.cell in majorities]
    llm_labels = [p.a_won for p in compared]
    human_labels = [majorities[p.cell] for p in compared]
    by_item: defaultdict[tuple[int, int], dict[str, bool]] = defaultdict(dict)
    for p in picks:
        by_item[(p.cell, p.sample)][p.order] = p.a_won
    both = [orders for orders in by_item.values() if len(orders) == 2]
    self_cases, self_picks, elsewhere = 0, 0, []
    for p in compared:
        cell = data.cells[p.cell]
        a_own, b_own = cell.system_a in own, cell.system_b in own
        if a_own != b_own:
            humans_picked_own = majorities[p.cell] == a_own
            if not humans_picked_own:
                self_cases += 1
                self_picks += p.a_won == a_own
        elif not a_own:
            elsewhere.append(p.a_won != majorities[p.cell])
    return AgreementRow(
        question=question,
        judge=judge,
        picks=len(compared),
        cells=len({p.cell for p in compared}),
        agreement=float(np.mean(np.equal(llm_labels, human_labels))) if compared else None,
        kappa=cohen_kappa(llm_labels, human_labels),
        human_agreement=ceiling[0],
        human_kappa=ceiling[1],
        human_cells=ceiling[2],
        position_consistency=float(np.mean([o["ab"] == o["ba"] for o in both])) if both else None,
        consistency_pairs=len(both),
        first_position_rate=float(np.mean([p.first_won for p in picks])) if picks else None,
        self_preference=self_picks / self_cases if self_cases else None,
        self_preference_cases=self_cases,
        against_humans_elsewhere=float(np.mean(elsewhere)) if elsewhere else None,
    )
