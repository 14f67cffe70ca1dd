"""Exporting a study as a study file: the same models import reads, written from the stored rows."""

from surveys.models import Answer, Study

from .format import SETTING_BLOCKS, AnswerEntry, QuestionEntry, StudyFile, SystemEntry, VignetteEntry


def export_study(study: Study) -> dict:
    """The study as a study file, with every stored answer; importing it gives back the same study."""
    answers = (
        Answer.objects.for_study(study)
        .select_related("system", "vignette", "low_authenticity_confirmed_by")
        .prefetch_related("features")
        .order_by("vignette__position", "system__position", "sample")
    )
    study_file = StudyFile.from_row(
        study,
        reference_system=study.reference_system.key if study.reference_system else None,
        **{name: block.from_row(study) for name, block in SETTING_BLOCKS.items()},
        questions=[QuestionEntry.from_row(question) for question in study.questions.all()],
        systems=[SystemEntry.from_row(system) for system in study.systems.all()],
        vignettes=[VignetteEntry.from_row(vignette) for vignette in study.vignettes.all()],
        answers=[AnswerEntry.from_answer(answer) for answer in answers],
    )
    data = study_file.model_dump(mode="json", by_alias=True)
    if isinstance(data.get("prolific"), dict):
        # The Prolific study belongs to this study alone (surveys/prolific/ownership.py): a copy gets its own.
        data["prolific"].pop("study_id", None)
    return data
