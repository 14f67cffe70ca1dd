"""Trying a study before it is live: a preview snapshot of a draft, shown in each of its languages.

A preview is a snapshot of kind "preview" (models/snapshots.py) of the study's rows as they are now, with
the answers going live would show (the selected ones, and each lone answer). Its pages are the judging
survey's own templates, filled from the snapshot; nothing a researcher does in a preview is recorded:
no participant, no cell, no judgment, no entry counted (views/preview.py keeps its place in the URL).
"""

from dataclasses import dataclass
from itertools import combinations

from ..models import Answer, Study, StudySnapshot, Vignette
from .languages import interface_warning, missing_texts
from .lifecycle import lone_answers
from .snapshots import as_answer, as_question, as_vignette, write_snapshot


@dataclass(frozen=True)
class PreviewVisitor:
    """Who the judging templates think they are showing a page to: a researcher, counted nowhere."""

    study: Study
    is_preview: bool = True
    status: str = ""


def study_languages(study: Study) -> list[str]:
    """The study's language first, then every other language any of its texts is translated into."""
    found: set[str] = set(study.translations or {})
    for rows in (study.questions.all(), study.vignettes.all(), Answer.objects.for_study(study).selected()):
        for row in rows:
            found |= set(row.translations or {})
    return [study.language, *sorted(found - {study.language})]


def untranslated(study: Study, language: str) -> list[str]:
    """What participants in `language` would not read in it: the interface, then each study text by name."""
    shown_as = Study.objects.get(pk=study.pk)
    shown_as.language = language  # in memory only: the texts as a study in that language would show them
    interface = interface_warning(language)
    return ([interface] if interface else []) + [f"{name} is not translated" for name in missing_texts(shown_as)]


def write_preview(*, study: Study, by=None) -> StudySnapshot:
    """A preview snapshot of the study as it is now, with the answers going live would show."""
    shown = list(Answer.objects.for_study(study).selected()) + lone_answers(study)
    return write_snapshot(study=study, kind=StudySnapshot.Kind.PREVIEW, by=by, answers=shown)


@dataclass(frozen=True)
class PreviewPage:
    vignette: object
    first: Answer
    second: Answer


def preview_pages(snapshot: StudySnapshot) -> list[PreviewPage]:
    """The pages a judge would get: up to k vignettes, each with a pair of its answers (a different pair each time)."""
    content, study = snapshot.content, snapshot.study
    by_vignette: dict[int, list[dict]] = {}
    for answer in content["answers"]:
        by_vignette.setdefault(answer["vignette_id"], []).append(answer)
    pages = []
    for number, vignette in enumerate(content["vignettes"]):
        pairs = list(combinations(by_vignette.get(vignette["id"], []), 2))
        if pairs:
            first, second = pairs[number % len(pairs)]
            pages.append(PreviewPage(as_vignette(vignette, study.pk), as_answer(first), as_answer(second)))
    return pages[: study.vignettes_per_participant]


def preview_questions(snapshot: StudySnapshot) -> list:
    return [as_question(item, snapshot.study_id) for item in snapshot.content["questions"]]


def writing_preview_vignette(*, study: Study, snapshot: StudySnapshot | None = None) -> Vignette | None:
    """The vignette the answer-writing preview shows: the first of `snapshot` (a preview's, so that writers see
    what that preview's judges see), else of the study's own snapshot once it is live, else of its rows."""
    snapshot = snapshot or study.snapshot
    if snapshot is None:
        return study.vignettes.order_by("position", "id").first()
    first = snapshot.content["vignettes"][:1]
    return as_vignette(first[0], study.pk) if first else None
