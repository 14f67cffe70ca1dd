"""Importing a study file: create the study it describes, or update a draft in place, all or nothing."""

from collections.abc import Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from surveys.models import Answer, Question, Study, System, Vignette

from ...services.lifecycle import close_study, go_live
from ..answer_records import replace_features
from ..freezing import StudyFrozen, check_editable
from .format import AnswerEntry, QuestionEntry, SystemEntry, VignetteEntry
from .reading import StudyFileError, read_study_file


@transaction.atomic
def import_study(data: Any) -> Study:
    """Create or update the study a file describes; StudyFileError names every problem and writes nothing."""
    study_file = read_study_file(data)
    study = Study.objects.filter(slug=study_file.slug).first()
    try:
        if study:
            check_editable(study)  # a re-import rewrites questions, vignettes, systems, answers and design
    except StudyFrozen as exc:
        reason = " ".join(exc.messages).split(" Refused:")[0]
        raise StudyFileError([f"study.slug: {reason} Only a draft study can be re-imported."]) from None
    study = study or Study(slug=study_file.slug)
    study.name = study_file.name
    if "description" in study_file.model_fields_set:
        study.description = study_file.description
    if "language" in study_file.model_fields_set:
        study.language = study_file.language
    study.translations = study_file.translations
    for block in study_file.settings():
        for name in block.model_fields_set:  # a key the file leaves out leaves its field as it is
            if name == "prolific_study_id" and getattr(block, name) != study.prolific_study_id:
                # Linked only after Prolific's API shows whose it is (surveys/prolific/ownership.py), never by a file.
                raise StudyFileError(
                    [
                        "study_id: a Prolific study is linked in the study's admin page (Prolific is asked whose it "
                        "is) or created by 'Create or update Prolific draft', not set by a study file."
                    ]
                )
            setattr(study, name, getattr(block, name))
    study.save()

    _sync(study, Question, study_file.questions)
    _sync(study, Vignette, study_file.vignettes)
    systems = _sync(study, System, study_file.systems)
    study.reference_system = systems[study_file.reference_system]
    study.save(update_fields=["reference_system"])
    _import_answers(study, study_file.answers)

    try:
        if study_file.status in (Study.Status.LIVE, Study.Status.CLOSED):
            study = go_live(study=study)
        if study_file.status == Study.Status.CLOSED:
            study = close_study(study=study)
    except ValidationError as exc:
        raise StudyFileError([f"study.status: {message}" for message in exc.messages]) from exc
    return study


def _sync(
    study: Study,
    model: type[Question] | type[Vignette] | type[System],
    items: Sequence[QuestionEntry | VignetteEntry | SystemEntry],
) -> dict:
    """Make the study's rows of `model` match the file's items, by key; return them by key."""
    existing = {row.key: row for row in model.objects.filter(study=study)}
    rows = {}
    for position, item in enumerate(items):
        row = existing.pop(item.key, None) or model(study=study, key=item.key)
        for name in type(item).model_fields:
            setattr(row, name, getattr(item, name))
        row.position = position
        row.save()
        rows[row.key] = row
    for stale in existing.values():
        stale.delete()
    return rows


def _user(username: str | None):
    """The confirming researcher, when this installation has them (the confirmation's time is kept either way)."""
    if not username:
        return None
    return get_user_model()._default_manager.filter(**{get_user_model().USERNAME_FIELD: username}).first()


def _import_answers(study: Study, answers: list[AnswerEntry]) -> None:
    systems = {s.key: s for s in study.systems.all()}
    vignettes = {v.key: v for v in study.vignettes.all()}
    Answer.objects.for_study(study).update(selected=False)
    keep = set()
    for item in answers:
        fields = {
            "action": item.action,
            "additional_information": item.additional_information,
            "selected": item.selected,
            "translations": item.translations,
        }
        if item.authenticity is not None:  # how a survey answer was written survives an export and re-import
            fields |= {
                "authenticity": item.authenticity.rating,
                "writing_signals": item.authenticity.signals,
                "low_authenticity_confirmed_at": item.authenticity.confirmed_at,
                "low_authenticity_confirmed_by": _user(item.authenticity.confirmed_by),
            }
        if "raw_text" in item.model_fields_set:  # exports leave it out; an LLM answer's raw reply must survive
            fields["raw_text"] = item.raw_text
        answer, _ = Answer.objects.update_or_create(
            system=systems[item.system],
            vignette=vignettes[item.vignette],
            sample=item.sample,
            defaults=fields,
            # An answer written in the survey or collected from an LLM keeps its origin when a file updates it.
            create_defaults={**fields, "origin": Answer.Origin.IMPORTED},
        )
        replace_features(answer=answer, features=item.features)
        keep.add(answer.pk)
    Answer.objects.for_study(study).filter(origin=Answer.Origin.IMPORTED).exclude(pk__in=keep).delete()
