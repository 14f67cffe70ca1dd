"""The answer-writing survey: lay respondents from Prolific and invited experts write answers.

A respondent answers as one System (the study's first `human` system, or the expert system of
their invitation). After consent they get `Study.answers_per_respondent` vignettes, the ones with
the fewest answers for that system so far first (ties at random); each page they submit becomes
one Answer (origin `respondent`, the next free sample number). A page is final once submitted: a
double submit, the back button or a reload never writes a second Answer.
"""

import logging
import random
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone
from django.utils.translation import gettext

from ..models import Answer, Invitation, Respondent, RespondentTask, Study, System
from .answer_records import create_answer
from .answer_shape import FeatureIn
from .authenticity import record_signals
from .errors import InvalidProlificLink, NotOffered, SessionInUse, StudyClosed
from .judging import OTHER_SESSION
from .prolific_link import parse_prolific_params, prolific_return_url

log = logging.getLogger(__name__)

# An unsubmitted page counts towards its vignette's load for this long after it was handed out, so
# respondents arriving together spread out, while abandoned pages stop counting eventually.
OPEN_TASK_HOLD = timedelta(hours=3)


def _open_study(study: Study) -> None:
    if study.status == Study.Status.CLOSED:
        raise StudyClosed(gettext("This study is closed and no longer takes answers. Thank you for your interest."))


def lay_system(study: Study) -> System:
    system = study.systems.filter(kind=System.Kind.HUMAN).order_by("position", "id").first()
    if system is None:
        raise NotOffered(gettext("This study does not collect answers from participants."))
    return system


@transaction.atomic
def start_prolific_respondent(
    *, study: Study, prolific_pid: str, prolific_study_id: str, session_id: str
) -> Respondent:
    """The respondent for this Prolific participant: created on the first visit, resumed after."""
    try:
        params = parse_prolific_params(
            {"PROLIFIC_PID": prolific_pid, "STUDY_ID": prolific_study_id, "SESSION_ID": session_id}
        )
    except InvalidProlificLink as exc:
        problems = " ".join(exc.messages)
        message = gettext("This link is incomplete: {problems} Please open the study from Prolific.")
        raise InvalidProlificLink(message.format(problems=problems)) from None
    prolific_pid, prolific_study_id, session_id = params.pid, params.study_id, params.session_id
    existing = Respondent.objects.filter(study=study, prolific_pid=prolific_pid).first()
    if existing:
        return _same_session(existing, session_id)
    _open_study(study)
    system = lay_system(study)
    try:
        with transaction.atomic():
            return Respondent.objects.create(
                study=study,
                system=system,
                prolific_pid=prolific_pid,
                prolific_study_id=prolific_study_id,
                session_id=session_id,
            )
    except IntegrityError:  # the same participant arrived twice at once: the first one wins
        return _same_session(Respondent.objects.get(study=study, prolific_pid=prolific_pid), session_id)


def _same_session(respondent: Respondent, session_id: str) -> Respondent:
    """A PROLIFIC_PID is no secret (it is in every link): resuming a writer takes their SESSION_ID too."""
    if respondent.session_id != session_id:
        raise SessionInUse(gettext(OTHER_SESSION))
    return respondent


@transaction.atomic
def start_invited_respondent(*, invitation: Invitation) -> Respondent:
    """The respondent of an expert's invitation: the first opening uses it up, later ones resume."""
    existing = Respondent.objects.filter(invitation=invitation).first()
    if existing:
        return existing
    _open_study(invitation.study)
    errors = invitation_errors(study=invitation.study, system=invitation.system)
    if errors:  # the study changed under the invitation: the researcher's setup, said to them in the log
        log.warning("invitation %s cannot be used: %s", invitation.pk, "; ".join(errors))
        raise NotOffered(gettext("This invitation no longer fits the study; ask the researcher for a new link."))
    try:
        with transaction.atomic():
            respondent = Respondent.objects.create(
                study=invitation.study, system=invitation.system, invitation=invitation
            )
    except IntegrityError:
        return Respondent.objects.get(invitation=invitation)
    Invitation.objects.filter(pk=invitation.pk, used_at__isnull=True).update(used_at=timezone.now())
    return respondent


def invitation_errors(*, study: Study, system: System) -> list[str]:
    errors = []
    if system.study_id != study.pk:
        errors.append(f"system '{system.key}' belongs to another study")
    if system.kind != System.Kind.EXPERT:
        errors.append(f"system '{system.key}' is not an expert system")
    return errors


def create_invitation(*, study: Study, system: System, label: str = "", created_by=None) -> Invitation:
    errors = invitation_errors(study=study, system=system)
    if errors:
        raise ValidationError(errors)
    return Invitation.objects.create(study=study, system=system, label=label, created_by=created_by)


@transaction.atomic
def record_consent(*, respondent: Respondent, agreed: bool) -> Respondent:
    """Consent (then hand out the vignettes to write about) or its refusal. Asked once."""
    respondent = Respondent.objects.select_for_update().get(pk=respondent.pk)
    if respondent.status != Respondent.Status.STARTED:
        return respondent  # a second submit of the consent page changes nothing
    if not agreed:
        respondent.status = Respondent.Status.NO_CONSENT
        respondent.finished_at = timezone.now()
        respondent.save(update_fields=["status", "finished_at"])
        return respondent
    respondent.status = Respondent.Status.CONSENTED
    respondent.consented_at = timezone.now()
    respondent.save(update_fields=["status", "consented_at"])
    assign_vignettes(respondent=respondent)
    respondent.refresh_from_db()
    return respondent


def vignette_loads(*, system: System, now=None) -> dict[int, int]:
    """For each of the study's vignettes: answers of `system` so far plus its pages still being written."""
    now = now or timezone.now()
    loads = {pk: 0 for pk in system.study.vignettes.values_list("pk", flat=True)}
    written = Answer.objects.filter(system=system).values("vignette_id").annotate(n=Count("pk"))
    open_pages = (
        RespondentTask.objects.filter(
            respondent__system=system, submitted_at__isnull=True, assigned_at__gte=now - OPEN_TASK_HOLD
        )
        .values("vignette_id")
        .annotate(n=Count("pk"))
    )
    for row in list(written) + list(open_pages):
        if row["vignette_id"] in loads:
            loads[row["vignette_id"]] += row["n"]
    return loads


@transaction.atomic
def assign_vignettes(*, respondent: Respondent, rng: random.Random | None = None) -> list[RespondentTask]:
    """Hand out m vignettes, least answered first for the respondent's system; ties at random.

    Idempotent: a respondent who already has pages keeps them. Assignments for one system happen
    one at a time (a row lock on the system on PostgreSQL; SQLite serialises writers anyway).
    """
    rng = rng or random.Random()
    System.objects.select_for_update(no_key=True, of=("self",)).get(pk=respondent.system_id)
    tasks = list(respondent.tasks.order_by("position"))
    if tasks:
        return tasks
    loads = vignette_loads(system=respondent.system)
    if not loads:
        raise ValidationError("The study has no vignettes to answer.")
    if respondent.study.answers_per_respondent < 1:
        raise ValidationError("The study asks each respondent for no answers: set 'answers per respondent'.")
    m = min(respondent.study.answers_per_respondent, len(loads))
    chosen = sorted(loads, key=lambda pk: (loads[pk], rng.random()))[:m]
    tasks = RespondentTask.objects.bulk_create(
        RespondentTask(respondent=respondent, vignette_id=pk, position=position)
        for position, pk in enumerate(chosen, start=1)
    )
    Respondent.objects.filter(pk=respondent.pk).update(status=Respondent.Status.WRITING)
    return tasks


def next_task(respondent: Respondent) -> RespondentTask | None:
    return respondent.tasks.filter(submitted_at__isnull=True).order_by("position").first()


def mark_task_started(*, task: RespondentTask) -> None:
    RespondentTask.objects.filter(pk=task.pk, started_at__isnull=True).update(started_at=timezone.now())


@transaction.atomic
def submit_answer(
    *,
    task: RespondentTask,
    features: list[FeatureIn],
    action: str,
    additional_information: str = "",
    writing_signals: str | None = None,
    texts: dict[str, str] | None = None,
) -> RespondentTask:
    """Store what the respondent wrote on this page as an Answer of their system; once only.

    A page already submitted (double submit, back button, reload) is returned unchanged. Raises
    ValidationError with the rules broken (weights not adding to 100, an empty action, …).
    """
    task = (
        RespondentTask.objects.select_for_update(of=("self",)).select_related("respondent", "vignette").get(pk=task.pk)
    )
    if task.submitted_at is not None:
        return task
    respondent = task.respondent
    if respondent.status != Respondent.Status.WRITING:
        raise ValidationError("This survey is not open for writing any more.")
    if not action.strip():
        raise ValidationError("Please say what should be done: the action cannot be empty.")
    # Sample numbers are per system × vignette: take them one at a time.
    system = System.objects.select_for_update(no_key=True, of=("self",)).get(pk=respondent.system_id)
    answer = create_answer(
        system=system,
        vignette=task.vignette,
        features=features,
        action=action.strip(),
        additional_information=additional_information.strip(),
        origin=Answer.Origin.RESPONDENT,
    )
    record_signals(answer=answer, raw=writing_signals, texts=texts or {})
    now = timezone.now()
    task.answer = answer
    task.submitted_at = now
    task.started_at = task.started_at or now
    task.save(update_fields=["answer", "submitted_at", "started_at"])
    if not respondent.tasks.filter(submitted_at__isnull=True).exists():
        Respondent.objects.filter(pk=respondent.pk, status=Respondent.Status.WRITING).update(
            status=Respondent.Status.COMPLETED, finished_at=now
        )
    return task


def completion_url(respondent: Respondent) -> str | None:
    """Where a finished Prolific respondent goes: Prolific's completion page with answer writing's own code."""
    if not respondent.prolific_pid:
        return None
    code = (
        respondent.study.answering_no_consent_code
        if respondent.status == Respondent.Status.NO_CONSENT
        else respondent.study.answering_completion_code
    )
    return prolific_return_url(code) or None


def full_url(study: Study) -> str | None:
    """Where a Prolific writer who cannot start (the study takes no more writers) goes, with its code."""
    return prolific_return_url(study.answering_full_code) or None
