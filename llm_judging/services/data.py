"""The judgments both kinds of judge made on a study's cells, as plain rows (no ORM objects past here).

Human picks come from surveys' valid judgments only (the same filter as the human analysis); LLM picks from
this app's finished JudgeCalls. A pick is oriented on the cell: ``a_won`` is True when the cell's answer_a won.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from surveys.models import Cell, Judgment, Study

from ..models import JudgeCall, JudgeModel


@dataclass(frozen=True)
class CellInfo:
    pk: int
    answer_a: int
    answer_b: int
    system_a: str  # system keys
    system_b: str
    vignette: int = 0  # the cluster: a vignette's cells share its answers, so their picks are correlated


@dataclass(frozen=True)
class HumanPick:
    cell: int
    participant: int
    question: str
    a_won: bool


@dataclass(frozen=True)
class JudgePick:
    judge: str
    cell: int
    order: str  # "ab": answer_a shown first
    sample: int
    question: str
    a_won: bool

    @property
    def first_won(self) -> bool:
        return self.a_won == (self.order == JudgeCall.Order.AB)


@dataclass
class StudyPicks:
    cells: dict[int, CellInfo]
    questions: list[str]
    systems: list[str]  # keys, the study's order
    reference: str
    judges: list[JudgeModel]
    human: list[HumanPick] = field(default_factory=list)
    llm: list[JudgePick] = field(default_factory=list)

    def human_by_question(self) -> dict[str, list[HumanPick]]:
        grouped = defaultdict(list)
        for pick in self.human:
            grouped[pick.question].append(pick)
        return grouped

    def llm_by(self, question: str, judge: str) -> list[JudgePick]:
        return [p for p in self.llm if p.question == question and p.judge == judge]


def read_study_picks(*, study: Study) -> StudyPicks:
    cells = {
        c.pk: CellInfo(c.pk, c.answer_a_id, c.answer_b_id, c.answer_a.system.key, c.answer_b.system.key, c.vignette_id)
        for c in Cell.objects.filter(study=study).select_related("answer_a__system", "answer_b__system")
    }
    questions = list(study.questions.order_by("position", "id").values_list("key", flat=True))
    systems = list(study.systems.order_by("position", "id").values_list("key", flat=True))
    reference = study.reference_system.key if study.reference_system else systems[0] if systems else ""
    human = [
        HumanPick(cell, participant, question, winner == cells[cell].answer_a)
        for cell, participant, question, winner in Judgment.objects.valid()
        .for_study(study)
        .filter(assignment__cell__in=list(cells))
        .order_by("pk")
        .values_list("assignment__cell_id", "assignment__participant_id", "question__key", "winner_id")
    ]
    calls = JudgeCall.objects.for_study(study).done().select_related("judge").order_by("pk")
    llm, judges = [], {}
    for call in calls:
        judges[call.judge.key] = call.judge
        for question in questions:
            winner = call.winner_id(question)
            if winner is not None:
                llm.append(
                    JudgePick(
                        call.judge.key,
                        call.cell_id,
                        call.order,
                        call.sample,
                        question,
                        winner == cells[call.cell_id].answer_a,
                    )
                )
    return StudyPicks(cells, questions, systems, reference, sorted(judges.values(), key=lambda j: j.key), human, llm)
