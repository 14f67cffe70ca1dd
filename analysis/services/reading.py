"""Reading a study's valid judgments into arrays per question (item = the study's systems in order)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
from django.core.exceptions import ValidationError

from moraljudge.replica import reads_from_replica
from surveys.models import Answer, Judgment, Study


@dataclass
class QuestionData:
    """One question's valid judgments as arrays over the study's systems (item order)."""

    key: str
    text: str
    winners: list[int] = field(default_factory=list)
    losers: list[int] = field(default_factory=list)
    first: list[int] = field(default_factory=list)  # item shown first
    clusters: list[int] = field(default_factory=list)  # participant id
    vignettes: list[int] = field(default_factory=list)
    style: list[float] = field(default_factory=list)  # words(winner) - words(loser)

    def arrays(self):
        return (
            np.asarray(self.winners, np.int64),
            np.asarray(self.losers, np.int64),
            np.asarray(self.first, np.int64),
            np.asarray(self.clusters, np.int64),
            np.asarray(self.vignettes, np.int64),
            np.asarray(self.style, float),
        )


@dataclass
class StudyData:
    systems: list[dict]  # key, label, kind; index = item number
    reference: int
    questions: list[QuestionData]
    vignette_keys: dict[int, str]
    judgment_count: int
    participant_count: int
    data_hash: str


def answer_word_counts(*, study: Study) -> dict[int, int]:
    """Words per answer of the study (action, additional information, features and reasons)."""
    answers = Answer.objects.for_study(study).prefetch_related("features")
    return {answer.pk: answer.word_count() for answer in answers}


@reads_from_replica
def read_study_data(*, study: Study) -> StudyData:
    """The valid judgments of a study, per question, as item indices over its systems."""
    systems = list(study.systems.order_by("position", "id"))
    if study.reference_system_id is None:
        raise ValidationError(f"Study '{study.slug}' has no reference system: set one before fitting.")
    index = {system.pk: k for k, system in enumerate(systems)}
    if study.reference_system_id not in index:
        raise ValidationError(f"Study '{study.slug}': the reference system is not one of its systems.")
    questions = {q.pk: QuestionData(q.key, q.text) for q in study.questions.order_by("position", "id")}
    words = answer_word_counts(study=study)
    rows = (
        Judgment.objects.valid()
        .for_study(study)
        .order_by("id")
        .values_list(
            "id",
            "question_id",
            "winner_id",
            "loser_id",
            "winner__system_id",
            "loser__system_id",
            "winner_position",
            "assignment__participant_id",
            "assignment__vignette_id",
        )
    )
    digest = hashlib.sha256()
    participants: set[int] = set()
    count = 0
    for pk, question_id, winner, loser, winner_system, loser_system, position, participant, vignette in rows:
        digest.update(f"{pk}:{winner}\n".encode())
        data = questions[question_id]
        w, lo = index[winner_system], index[loser_system]
        data.winners.append(w)
        data.losers.append(lo)
        data.first.append(w if position == Judgment.Position.FIRST else lo)
        data.clusters.append(participant)
        data.vignettes.append(vignette)
        data.style.append(words.get(winner, 0) - words.get(loser, 0))
        participants.add(participant)
        count += 1
    return StudyData(
        systems=[{"key": s.key, "label": s.label or s.key, "kind": s.kind} for s in systems],
        reference=index[study.reference_system_id],
        questions=list(questions.values()),
        vignette_keys=dict(study.vignettes.values_list("id", "key")),
        judgment_count=count,
        participant_count=len(participants),
        data_hash=digest.hexdigest(),
    )
