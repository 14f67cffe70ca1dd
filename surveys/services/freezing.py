"""Live means frozen: what judges see and how cells fill cannot change once a study has gone live.

The one list of what freezes and the one check, used by the admin, the API and study-file imports.
Once a study leaves draft, its questions, vignettes, systems and answers, and the Study fields in
FROZEN_STUDY_FIELDS, stay as they were; the ways on are closing it or copying it as a new draft
(`copy_as_draft`). The other fields (name, description, Prolific codes and policy) stay editable:
they change neither the judges' pages nor the allocation, and the admin records every change.
"""

import re
from typing import Any

from django.db import transaction

from ..models import Answer, Feature, Question, Study, System, Vignette
from ..models.freeze import StudyFrozen, freeze_lifted  # noqa: F401 (the model guard's error and data-fix lift)

# Study fields that change what judges see, how cells fill, or how the results are read.
FROZEN_STUDY_FIELDS = (
    "slug",  # in the link pasted into Prolific
    "reference_system",
    # Design: the cells' targets, the pages per judge, the order shown, the reservations.
    "repetitions",
    "vignettes_per_participant",
    "order_rule",
    "answers_per_respondent",
    "reservation_minutes",
    # Timing and attention: whose judgments count towards a cell.
    "minimum_seconds",
    "fast_fraction_of_median",
    "attention_prompt",
    "attention_options",
    # The participants' language, and the study's texts in it (the attention check's among them).
    "language",
    "translations",
    # The instrument.
    "system_prompt",
    "user_prompt",
)

# The study's parts that freeze with it (related names on Study; answers through their vignettes).
FROZEN_PARTS = ("questions", "vignettes", "systems", "answers")

# The fields copy_as_draft leaves behind: the copy is a new draft with its own history.
_NOT_COPIED = {"id", "slug", "status", "created_at", "went_live_at", "closed_at", "reference_system", "snapshot"}
_NOT_COPIED |= {
    "prolific_study_id",
    "prolific_link",
    "prolific_status",
    "prolific_synced_at",
}  # the copy gets a Prolific study of its own


def is_frozen(study: Study | None) -> bool:
    return study is not None and study.pk is not None and study.status != Study.Status.DRAFT


def frozen_reason(study: Study) -> str:
    return (
        f"Study '{study.slug}' is {study.status}: its questions, vignettes, systems, answers, design and "
        "instrument are frozen, so that what judges see and how cells fill cannot shift under them. "
        "To change them, copy it as a new draft (the study list's action)."
    )


def check_editable(study: Study, fields=FROZEN_STUDY_FIELDS + FROZEN_PARTS) -> None:
    """Raise StudyFrozen when `fields` (Study fields or part names; default: anything frozen) may not change."""
    touched = sorted(set(fields) & set(FROZEN_STUDY_FIELDS + FROZEN_PARTS))
    if is_frozen(study) and touched:
        raise StudyFrozen(frozen_reason(study) + f" Refused: {', '.join(touched)}.")


def _free_slug(base: str) -> str:
    stem = re.sub(r"-copy(-\d+)?$", "", base)[:50]
    slug, n = f"{stem}-copy", 1
    while Study.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{stem}-copy-{n}"
    return slug


@transaction.atomic
def copy_as_draft(*, study: Study, slug: str | None = None) -> Study:
    """A new draft with the study's settings, questions, vignettes, systems and answers (selections kept)."""
    copy = Study(
        **{f.attname: getattr(study, f.attname) for f in Study._meta.concrete_fields if f.name not in _NOT_COPIED}
    )
    copy.slug = slug or _free_slug(study.slug)
    copy.name = f"{study.name} (copy)"[: Study._meta.get_field("name").max_length]
    copy.save()
    copied: dict[type, dict[int, Any]] = {}  # model → old pk → the copied row
    for model in (Question, Vignette, System):
        copied[model] = {}
        for row in model.objects.filter(study=study).order_by("pk"):
            old_pk = row.pk
            row.pk = row.id = None
            row.study = copy
            row.save()
            copied[model][old_pk] = row
    if study.reference_system_id:
        copy.reference_system = copied[System][study.reference_system_id]
        copy.save(update_fields=["reference_system"])
    for answer in Answer.objects.for_study(study).prefetch_related("features").order_by("pk"):
        features = list(answer.features.all())
        answer.pk = answer.id = None
        answer.system = copied[System][answer.system_id]
        answer.vignette = copied[Vignette][answer.vignette_id]
        answer.save()
        Feature.objects.bulk_create(
            Feature(answer=answer, position=f.position, feature=f.feature, weight=f.weight, reason=f.reason)
            for f in features
        )
    return copy
