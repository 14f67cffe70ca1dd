"""A study's way from draft to live to closed, and the comparison plan it gets on going live."""

from itertools import combinations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from ..models import Answer, AuditEvent, Cell, Study
from .audit import record_event
from .snapshots import write_live_snapshot


def missing_for_live(study: Study) -> list[str]:
    """Everything that stops the study from going live, in words a researcher can act on."""
    problems = []
    systems = list(study.systems.all())
    vignettes = list(study.vignettes.all())
    if len(systems) < 2:
        problems.append(f"at least two systems are needed (the study has {len(systems)})")
    if study.reference_system_id is None:
        problems.append("no reference system is set")
    elif study.reference_system_id not in {s.pk for s in systems}:
        problems.append("the reference system is not one of the study's systems")
    if not vignettes:
        problems.append("the study has no vignettes")
    if not study.questions.exists():
        problems.append("the study has no questions")
    if vignettes and study.vignettes_per_participant > len(vignettes):
        problems.append(
            f"each participant is to judge {study.vignettes_per_participant} vignettes, "
            f"but the study has only {len(vignettes)}"
        )
    problems += prolific_problems(study)
    lone = lone_answers(study)
    problems += shown_answer_problems(study, lone)
    selected = set(Answer.objects.for_study(study).selected().values_list("system_id", "vignette_id"))
    selected |= {(answer.system_id, answer.vignette_id) for answer in lone}  # selected on going live
    for system in systems:
        # One line per system: a system without answers yet is one problem, not one per vignette.
        missing = [v.key for v in vignettes if (system.pk, v.pk) not in selected]
        if len(missing) == 1:
            problems.append(f"no selected answer for system '{system.key}' on vignette '{missing[0]}'")
        elif missing:
            problems.append(
                f"no selected answer for system '{system.key}' on {len(missing)} of {len(vignettes)} vignettes: "
                + ", ".join(f"'{key}'" for key in missing)
            )
    return problems


def shown_answer_problems(study: Study, lone: list[Answer]) -> list[str]:
    """What judges would be shown that they must not be: an answer without features (its page cannot be
    drawn), or one rated low authenticity that nobody confirmed (docs/authenticity.md)."""
    shown = list(Answer.objects.for_study(study).selected().select_related("system", "vignette")) + lone
    problems = []
    featureless = {answer.pk for answer in Answer.objects.filter(pk__in=[a.pk for a in shown], features__isnull=True)}
    for answer in shown:
        where = f"system '{answer.system.key}' on vignette '{answer.vignette.key}'"
        if answer.pk in featureless:
            problems.append(f"the answer of {where} has no features: give it its features, or select another")
        if answer.authenticity == Answer.Authenticity.LOW and answer.low_authenticity_confirmed_at is None:
            problems.append(
                f"the answer of {where} is rated low authenticity and nobody confirmed selecting it: review it and "
                "select it with the confirmation on the answers page, or select another"
            )
    return problems


def runs_on_prolific(study: Study) -> bool:
    """Whether judges come from Prolific: a Prolific study id, or a draft created there from the admin."""
    return bool(study.prolific_study_id or study.prolific_status)


def prolific_problems(study: Study) -> list[str]:
    """A study on Prolific needs its completion code (judges who finish go back with it); a lab study no Prolific."""
    if study.lab_study and runs_on_prolific(study):
        return ["a lab study runs without Prolific, but a Prolific study id is set: clear one of the two"]
    if runs_on_prolific(study) and not study.completion_code:
        return [
            "the study runs on Prolific but has no completion code: judges who finish could not go back to "
            "Prolific (set the codes under 'Quality and Prolific policy', or make it a lab study)"
        ]
    return []


def end_of_survey(study: Study) -> str:
    """What judges see at the end, in the researcher's words (the study page says it before going live)."""
    if study.lab_study:
        code = f" and the completion code {study.completion_code} to show you" if study.completion_code else ""
        return f"Lab study: judges end on 'Thank you: you have finished'{code}; nobody is sent to Prolific"
    if study.completion_code:
        return f"judges who finish are sent back to Prolific with the completion code {study.completion_code}"
    return "judges who finish are asked to go back to Prolific and tell the researchers (no completion code)"


def launch_warnings(study: Study) -> list[str]:
    """What does not stop the study from going live, but a launch on Prolific needs."""
    warnings = []
    lone = len(lone_answers(study)) if study.status == Study.Status.DRAFT else 0
    if lone:
        warnings.append(f"going live selects the only answer of {lone} system × vignette (see the answers page)")
    if study.lab_study:
        return warnings  # no Prolific: no codes or study id to miss
    if not study.completion_code:
        warnings.append("no completion code is set: judges who finish get no code to give Prolific")
    elif runs_on_prolific(study):
        absent = [label for label, code in _other_codes(study) if not code]
        if absent:
            warnings.append("no code is set for " + ", ".join(absent) + ": those judges get none to give Prolific")
    if not study.prolific_study_id:
        # Without it no entry is checked against Prolific (STUDY_ID, reconciliation): invented ids would count.
        warnings.append("no Prolific study id is set: anyone with the link can take part")
    return warnings


def lone_answers(study: Study) -> list[Answer]:
    """Answers that are the only one of their system × vignette, where nothing is selected yet.

    Going live selects them: there is no choice to make (a researcher with twelve such cells no longer
    clicks twelve times). Where a system × vignette has two or more answers, the researcher still chooses.
    """
    undecided = (
        Answer.objects.for_study(study)
        .values("system_id", "vignette_id")
        .annotate(n=Count("id"), chosen=Count("id", filter=Q(selected=True)), only=Max("id"))
        .filter(n=1, chosen=0)
        .order_by()
    )
    ids = [row["only"] for row in undecided]
    answers = Answer.objects.filter(pk__in=ids).select_related("system", "vignette")
    return list(answers.order_by("vignette__position", "system__position"))


def _other_codes(study: Study) -> list[tuple[str, str]]:
    return [
        ("a failed attention check", study.failed_attention_code),
        ("declining consent", study.no_consent_code),
        ("a full study (screened out)", study.screened_out_code),
    ]


@transaction.atomic
def go_live(*, study: Study, by=None) -> Study:
    """Make the draft live: select each lone answer (lone_answers), check, build the comparison plan."""
    study = Study.objects.select_for_update().get(pk=study.pk)
    if study.status != Study.Status.DRAFT:
        raise ValidationError(f"Study '{study.slug}' is {study.status}; only a draft can go live.")
    problems = missing_for_live(study)
    if problems:
        raise ValidationError([f"Study '{study.slug}' cannot go live: " + "; ".join(problems) + "."])
    for answer in lone_answers(study):  # nothing written above a refusal: the check came first
        answer.selected, answer.selected_by, answer.selected_at = True, by, timezone.now()
        answer.save(update_fields=["selected", "selected_by", "selected_at"])
    build_comparison_plan(study=study)
    write_live_snapshot(study=study, by=by)  # what participants are shown from now on, checked above
    study.status = Study.Status.LIVE
    study.went_live_at = timezone.now()
    study.save(update_fields=["status", "went_live_at"])
    record_event(action=AuditEvent.Action.WENT_LIVE, user=by, study=study, cells=study.cells.count())
    return study


def build_comparison_plan(*, study: Study) -> int:
    """One cell per unordered pair of selected answers on each vignette, each wanting R judges."""
    selected = Answer.objects.for_study(study).selected().order_by("vignette_id", "system__position", "system_id")
    by_vignette: dict[int, list[Answer]] = {}
    for answer in selected:
        by_vignette.setdefault(answer.vignette_id, []).append(answer)
    cells = [
        Cell(study=study, vignette_id=vignette_id, answer_a=a, answer_b=b, target=study.repetitions)
        for vignette_id, answers in by_vignette.items()
        for a, b in combinations(answers, 2)
    ]
    Cell.objects.bulk_create(cells, ignore_conflicts=True)
    return len(cells)


@transaction.atomic
def close_study(*, study: Study, by=None) -> Study:
    study = Study.objects.select_for_update().get(pk=study.pk)
    if study.status != Study.Status.LIVE:
        raise ValidationError(f"Study '{study.slug}' is {study.status}; only a live study can be closed.")
    study.status = Study.Status.CLOSED
    study.closed_at = timezone.now()
    study.save(update_fields=["status", "closed_at"])
    record_event(action=AuditEvent.Action.CLOSED, user=by, study=study)
    return study
