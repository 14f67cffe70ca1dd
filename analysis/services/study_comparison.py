"""Two studies fitted jointly with the study as the vignette set: each shared system's difference between them.

A researcher who ran the source study's experiments as separate studies (published vignettes in one, novel ones
in the other) picks two studies that share the reference system and some other system keys. Their valid
judgments between shared systems are fitted as one data set whose vignette sets are the two studies
(analysis/bradley_terry/sets.py): each study's abilities, and each system's ability in the second study minus
its ability in the first, with the headline test (CR2 over vignettes, judge design effect, Satterthwaite df)
and Holm across systems. Vignettes are distinct rows per study, so they are nested in studies. Judges are
Participants of one study each; a person (the same Prolific id) who judged in both is one judge here, so their
judgments are clustered together, and the comparison says how many there were.

Fitted on request from the judgments as they are (no stored run): nothing is saved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.core.exceptions import ValidationError

from surveys.models import Participant, Study

from ..bradley_terry.labels import codes
from ..bradley_terry.sets import by_set
from ..results import BySet, stored
from .judged import guarded
from .reading import StudyData, read_study_data
from .set_results import SetTable, set_table, stored_by_set


@dataclass(frozen=True)
class ComparedQuestion:
    key: str
    text: str
    n_judgments: tuple[int, int]  # per study, between shared systems
    by_set: BySet | None  # None: it could not be fitted (too few judgments in one study)


@dataclass(frozen=True)
class StudyComparison:
    first: Study  # the baseline: differences are the second study minus this one
    second: Study
    systems: list[str]  # the shared system keys, in the first study's order; the reference first
    labels: dict[str, str]
    reference: str
    left_out: list[str]  # systems of either study not in the other: their judgments are left out
    judges: tuple[int, int]  # judges per study
    shared_judges: int  # people (Prolific ids) who judged in both
    questions: list[ComparedQuestion]

    @property
    def judges_in_words(self) -> str:
        if not self.shared_judges:
            return (
                f"The studies' judges are distinct ({self.judges[0]:,} and {self.judges[1]:,}; no Prolific id judged "
                "in both), so the two studies' judgments are independent apart from the systems."
            )
        return (
            f"{self.shared_judges:,} people judged in both studies ({self.judges[0]:,} and {self.judges[1]:,} "
            "judges): each is one judge here, so their judgments in both studies are clustered together (the "
            "judge term of the test counts them once)."
        )


def shared_systems(first: Study, second: Study) -> list[str]:
    """The system keys both studies have, in the first study's order, after checking the reference is shared."""
    if first.pk == second.pk:
        raise ValidationError("Pick another study: a study compared with itself has no difference.")
    references = [study.reference_system.key if study.reference_system else None for study in (first, second)]
    if None in references:
        raise ValidationError("Both studies need a reference system.")
    if references[0] != references[1]:
        raise ValidationError(
            f"The studies measure against different references ('{references[0]}' and '{references[1]}'): their "
            "abilities are not on one scale. Compare studies that share the reference system's key."
        )
    theirs = set(second.systems.values_list("key", flat=True))
    shared = [key for key in first.systems.order_by("position", "id").values_list("key", flat=True) if key in theirs]
    if len(shared) < 2:
        raise ValidationError("The studies share no system key besides the reference: there is nothing to compare.")
    return shared


def compare_studies(*, first: Study, second: Study) -> StudyComparison:
    """Each shared question of the two studies fitted jointly with the study as the set (module docstring)."""
    systems = shared_systems(first, second)
    reference = first.reference_system.key if first.reference_system else ""
    data = [read_study_data(study=study) for study in (first, second)]
    person = PersonOf(first, second)
    left_out = sorted({system["key"] for one in data for system in one.systems} - set(systems))
    labels = {system["key"]: system["label"] for one in reversed(data) for system in one.systems}
    their_questions = {question.key: question for question in data[1].questions}
    questions = []
    for question in data[0].questions:
        other = their_questions.get(question.key)
        if other is not None:
            parts = [_shared_rows(question, data[0], systems), _shared_rows(other, data[1], systems)]
            questions.append(_joint(question, parts, systems, reference, person, (first.slug, second.slug)))
    judged = [
        np.unique(np.concatenate([q.clusters for q in one.questions] or [np.array([], np.int64)])) for one in data
    ]
    shared_people = len(set(person[judged[0]].tolist()) & set(person[judged[1]].tolist()))
    return StudyComparison(
        first, second, systems, {key: labels.get(key, key) for key in systems}, reference, left_out,
        (len(judged[0]), len(judged[1])), shared_people, questions,
    )  # fmt: skip


def _joint(question, parts, systems: list[str], reference: str, person: PersonOf, slugs: tuple[str, str]):
    counts = (len(parts[0][0]), len(parts[1][0]))
    if not all(counts):
        return ComparedQuestion(question.key, question.text, counts, None)
    winners, losers, clusters, vignettes = (np.concatenate([p[n] for p in parts]) for n in range(4))
    sets = np.repeat(np.array(slugs), counts)
    result = guarded(
        by_set, winners, losers, len(systems), reference=systems.index(reference), sets=sets, judges=person[clusters],
        vignettes=vignettes, item_names=systems, set_order=list(slugs),
    )  # fmt: skip
    return ComparedQuestion(question.key, question.text, counts, None if result is None else stored_by_set(result))


def _shared_rows(question, data: StudyData, systems: list[str]):
    """A question's judgments between shared systems, renumbered onto `systems`: winners, losers, judges, vignettes."""
    onto = np.array([systems.index(s["key"]) if s["key"] in systems else -1 for s in data.systems])
    winners, losers, _first, clusters, vignettes, _style = question.arrays()
    winners, losers = onto[winners], onto[losers]
    kept = (winners >= 0) & (losers >= 0)
    return winners[kept], losers[kept], clusters[kept], vignettes[kept]


class PersonOf:
    """Maps arrays of the two studies' participant ids to person codes (the same Prolific id: the same code)."""

    def __init__(self, first: Study, second: Study):
        rows = list(Participant.objects.filter(study__in=[first, second]).values_list("pk", "prolific_pid"))
        ids = np.array([pk for pk, _ in rows], dtype=np.int64)
        order = np.argsort(ids)
        people = np.array([pid or f"#{pk}" for pk, pid in rows], dtype=object).astype(str)
        self.ids, self.codes = ids[order], (codes(people) if len(rows) else np.zeros(0, np.intp))[order]

    def __getitem__(self, participant_ids: np.ndarray) -> np.ndarray:
        return self.codes[np.searchsorted(self.ids, np.asarray(participant_ids, np.int64))]


@dataclass(frozen=True)
class ComparedTable:
    key: str
    label: str
    text: str
    n_judgments: tuple[int, int]
    table: SetTable | None


@dataclass(frozen=True)
class ComparedTables:
    """What the comparison page shows: the comparison and, per shared question, its table by study."""

    comparison: StudyComparison
    questions: list[ComparedTable]


def compared_tables(comparison: StudyComparison) -> ComparedTables:
    labels = {question.key: question.short_label for question in comparison.first.questions.all()}
    return ComparedTables(
        comparison,
        [
            ComparedTable(
                question.key, labels.get(question.key) or question.key, question.text, question.n_judgments,
                None if question.by_set is None else set_table(
                    question.by_set, systems=comparison.systems, labels=comparison.labels,
                    reference=comparison.reference,
                ),
            )
            for question in comparison.questions
        ],
    )  # fmt: skip


def comparison_json(comparison: StudyComparison) -> dict:
    """The comparison as the API gives it: which studies and systems, what was done with the judges, and per
    shared question the results by study (`by_set`, as a refit stores results by set; null when not fitted)."""
    return {
        "first": comparison.first.slug,
        "second": comparison.second.slug,
        "reference": comparison.reference,
        "systems": comparison.systems,
        "left_out": comparison.left_out,
        "judges": list(comparison.judges),
        "shared_judges": comparison.shared_judges,
        "judges_in_words": comparison.judges_in_words,
        "questions": [
            {"question": q.key, "n_judgments": list(q.n_judgments), "by_set": stored(q.by_set)}
            for q in comparison.questions
        ],
    }
