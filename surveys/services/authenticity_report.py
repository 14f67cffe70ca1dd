"""The researcher's view of human answers' authenticity: counts, content checks and the CSV.

Content checks sit beside the behaviour rating (docs/authenticity.md): per vignette, the TF-IDF cosine of
each human answer (lay or expert) to the study's LLM answers and to the other respondents' answers, with
the most similar one named. A near-duplicate of an LLM answer, or of another person's answer (a copy ring),
is worth the researcher's eye whatever the writing behaviour said.
"""

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..models import Answer, Study, System
from .authenticity import signs_in_words, summary
from .text_similarity import answer_text, tfidf_matrix

NEAR_DUPLICATE = 0.8  # cosine at or above which two answers are called near-duplicates
HUMAN_KINDS = (System.Kind.HUMAN, System.Kind.EXPERT)
RATINGS = [choice for choice, _ in Answer.Authenticity.choices]


@dataclass(frozen=True)
class Closest:
    answer: Answer | None = None
    similarity: float | None = None

    @property
    def near_duplicate(self) -> bool:
        return self.similarity is not None and self.similarity >= NEAR_DUPLICATE


@dataclass(frozen=True)
class ContentCheck:
    llm: Closest
    human: Closest

    def flags(self) -> list[str]:
        found = []
        if self.llm.near_duplicate:
            found.append(f"near-duplicate of {self.llm.answer} ({self.llm.similarity:.2f})")
        if self.human.near_duplicate:
            found.append(f"near-duplicate of another person's answer {self.human.answer} ({self.human.similarity:.2f})")
        return found


def human_answers(study: Study):
    return Answer.objects.for_study(study).filter(system__kind__in=HUMAN_KINDS)


def rating_counts(study: Study) -> dict[str, int]:
    """Human answers per authenticity rating (answers not written in the survey are left out)."""
    counts = Counter(human_answers(study).exclude(authenticity="").values_list("authenticity", flat=True))
    return {rating: counts.get(rating, 0) for rating in RATINGS}


def counts_in_words(study: Study) -> str:
    counts = rating_counts(study)
    if not any(counts.values()):
        return "No answers written in the answer-writing survey yet."
    return " · ".join(f"{n} {rating}" for rating, n in counts.items())


def _closest(matrix: np.ndarray, row: int, candidates: list[int], answers: list[Answer]) -> Closest:
    if not candidates:
        return Closest()
    similarities = matrix[candidates] @ matrix[row]
    best = int(np.argmax(similarities))
    return Closest(answers[candidates[best]], round(float(similarities[best]), 3))


def content_checks(study: Study) -> dict[int, ContentCheck]:
    """{human answer id: its closest LLM answer and closest other person's answer on the same vignette}."""
    answers = list(
        Answer.objects.for_study(study).select_related("system", "vignette").prefetch_related("features").order_by("pk")
    )
    by_vignette: dict[int, list[Answer]] = {}
    for answer in answers:
        by_vignette.setdefault(answer.vignette_id, []).append(answer)
    checks = {}
    for group in by_vignette.values():
        if not any(a.system.kind in HUMAN_KINDS for a in group):
            continue
        matrix = tfidf_matrix([answer_text(a) for a in group])
        llm_rows = [i for i, a in enumerate(group) if a.system.kind == System.Kind.LLM]
        for row, answer in enumerate(group):
            if answer.system.kind not in HUMAN_KINDS:
                continue
            others = [i for i, a in enumerate(group) if i != row and a.system.kind in HUMAN_KINDS]
            checks[answer.pk] = ContentCheck(
                llm=_closest(matrix, row, llm_rows, group), human=_closest(matrix, row, others, group)
            )
    return checks


CSV_HEADER = [
    "answer_id", "system", "vignette", "sample", "selected", "rating", "chars", "keys", "typed", "pasted_chars", "moved",
    "quoted", "inserted", "pasted_share", "untyped_share", "pasted_after_away", "corrections", "chars_per_second",
    "key_intervals", "key_interval_cv", "signs", "pages_hidden", "hidden_seconds", "focus_lost",
    "focus_lost_seconds", "first_key_to_submit_seconds", "closest_llm_answer", "llm_similarity",
    "closest_human_answer", "human_similarity",
]  # fmt: skip


def csv_rows(study: Study):
    """One row (a dict by CSV_HEADER) per human answer: its rating, the signals' totals and the content checks."""
    checks = content_checks(study)
    for answer in human_answers(study).select_related("system", "vignette").order_by("vignette__position", "pk"):
        signals = answer.writing_signals
        totals = summary(signals) if signals else {}
        page = signals["page"] if signals else {}
        check = checks.get(answer.pk, ContentCheck(Closest(), Closest()))
        values = [
            answer.pk, answer.system.key, answer.vignette.key, answer.sample, answer.selected,
            answer.authenticity or "",
            *(totals.get(name, "") for name in ("chars", "keys", "typed", "pasted_chars", "moved", "quoted", "inserted")),
            *(round(totals[name], 3) if totals else "" for name in ("pasted_share", "untyped_share")),
            totals.get("pasted_after_away", ""),
            *(_blank(totals.get(name)) for name in ("corrections", "chars_per_second", "key_intervals", "key_interval_cv")),
            "; ".join(signs_in_words(signals)),
            page.get("hidden", ""), _seconds(page.get("hidden_ms")), page.get("blurred", ""),
            _seconds(page.get("blurred_ms")), _seconds(page.get("first_key_to_submit_ms")),
            str(check.llm.answer or ""), _blank(check.llm.similarity),
            str(check.human.answer or ""), _blank(check.human.similarity),
        ]  # fmt: skip
        yield dict(zip(CSV_HEADER, values, strict=True))


def _seconds(ms: int | None):
    return "" if ms is None else round(ms / 1000, 1)


def _blank(value):
    return "" if value is None else value
