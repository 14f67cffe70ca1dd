"""The links a researcher hands out, and their own tries of the survey (test participants).

A try is a `Participant` with `is_preview=True`: the entry limit never counts it (it starts without
Prolific's parameters), allocation gives it pages that hold no place in a cell, and the analysis,
exports, progress counts and Prolific reconciliation all leave it out. Removing the tries of a study
deletes those participants with their pages and judgments; no cell counter moves.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.urls import reverse

from ..models import Participant, Study
from .entry_limit import Limit, entry_limit

# Prolific fills these in for each participant; a lab study's link carries them the same way.
PROLIFIC_PLACEHOLDERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


@dataclass(frozen=True)
class StudyLinks:
    judging: str  # the participant link, with Prolific's placeholders
    answering: str  # the answer-writing link (/r/), with the same placeholders
    try_url: str  # a logged-in researcher's own try (a test participant)
    preview: str  # a preview of the study as it is now, in each of its languages (views/preview.py)
    can_try: bool  # a try needs the comparison plan, made when the study goes live
    tries: int  # test participants so far
    entry_limit: Limit | None = None  # what the link, opened with Prolific ids, is limited to (None: no limit)


def study_links(*, study: Study, absolute: Callable[[str], str]) -> StudyLinks:
    """The study's links; `absolute` turns a path into a full URL (request.build_absolute_uri)."""
    judging = absolute(reverse("surveys:judging-entry", args=[study.slug]))
    answering = absolute(reverse("surveys:answering-entry", args=[study.slug]))
    return StudyLinks(
        judging=f"{judging}?{PROLIFIC_PLACEHOLDERS}",
        answering=f"{answering}?{PROLIFIC_PLACEHOLDERS}",
        try_url=f"{judging}?restart=1",
        preview=reverse("surveys:preview", args=[study.slug]),
        can_try=study.cells.exists(),
        tries=Participant.objects.filter(study=study, is_preview=True).count(),
        entry_limit=entry_limit(),
    )


@transaction.atomic
def remove_test_participants(*, studies) -> int:
    """Delete the researchers' tries of these studies, with their pages and judgments; returns how many.

    Their pages never held a place in a cell (counts_toward_cell is False), so no counter changes.
    """
    tries = Participant.objects.filter(study__in=studies, is_preview=True)
    count = tries.count()
    tries.delete()
    return count
