"""The judging survey's behaviour: entering from Prolific, consent, demographics, pages, the check, quality.

Views call these functions; every write that matters happens here, each in one transaction, and
every step is checked against where the participant really is (`current_step`), so a double
submit, the back button or a reload never duplicates or skips anything.
"""

import secrets
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from ..models import (
    DEFAULT_ATTENTION_OPTIONS,
    Assignment,
    Judgment,
    Participant,
    Study,
)
from . import allocation, participation
from .allocation import has_room, reserve_pages
from .errors import EntryRefused, SessionInUse
from .live_content import page_of
from .page_record import other_position, record_page  # noqa: F401 (the judging pages' API)
from .participation import Event, StepName, locked_again, locked_participant
from .prolific_link import ProlificParams
from .timing import MEDIAN_NEEDS, median_seconds  # noqa: F401 (MEDIAN_NEEDS re-exported: the judging API)

CORRECT_ATTENTION_CHOICE = 2  # the method's check: "select the second of the two options"


@dataclass(frozen=True)
class Step:
    """Where a participant is (`name` picks the view and template); `assignment` is the current page for `pair`."""

    name: StepName
    assignment: Assignment | None = None
    done: int = 0
    total: int = 0
    assignments: tuple[Assignment, ...] = ()  # the pages as read for this step (judging only)


# A person's earlier session ended on Prolific: only then may the same PROLIFIC_PID start afresh.
SESSION_ENDED = (Participant.Status.RETURNED, Participant.Status.TIMED_OUT)
OTHER_SESSION = gettext_noop(
    "You already have a submission of this study in progress on Prolific, started in another session. "
    "Please continue it in the browser where you started it. To start again instead, first return that "
    "submission on Prolific, then open the study from Prolific once more."
)


@dataclass(frozen=True)
class EntryRead:
    """What the entry page reads: the study, its participants of one PROLIFIC_PID, and the one this browser is."""

    study: Study
    pid: str | None
    participants: tuple[Participant, ...]  # of `pid`
    resuming: Participant | None  # the participant of the study whose id this browser holds

    def of_pid(self, pid: str) -> list[Participant] | None:
        """The study's participants of `pid` (None when `pid` is not the one read)."""
        return list(self.participants) if pid == self.pid else None


def entry_read(slug: str, *, pid: str | None, participant_id: int | None) -> EntryRead | None:
    """The study named with its participants of `pid` and the one `participant_id` (None: no such study)."""
    study = next(iter(Study.objects.filter(slug=slug).order_by()[:1]), None)
    if study is None:
        return None
    wanted = (Q(prolific_pid=pid) if pid else Q()) | (Q(pk=participant_id) if participant_id else Q())
    found = list(Participant.objects.filter(wanted, study=study).order_by()) if pid or participant_id else []
    for participant in found:
        participant.study = study  # the study is read: not again
    theirs = tuple(p for p in found if pid and p.prolific_pid == pid)
    resuming = next((p for p in found if p.pk == participant_id), None)
    return EntryRead(study, pid, theirs, resuming)


def enter_study(
    *,
    study: Study,
    params: ProlificParams,
    admit: Callable[[], None] | None = None,
    read: EntryRead | None = None,
) -> Participant:
    """The participant for this person in this session (PROLIFIC_PID and SESSION_ID): found again, else new.

    Resuming needs both ids, so knowing someone's PROLIFIC_PID alone writes nothing on their behalf:
    another SESSION_ID while their session is open is refused (SessionInUse) and leaves it untouched.
    `admit` is called before a new participant is created (the entry rate limit), never on a resume.
    `read`: the entry page's read of the study (its participants of this PID), used when given.
    """
    # One read for both questions: is this session known, and has this person another one open?
    theirs = read.of_pid(params.pid) if read else None
    if theirs is None:
        theirs = list(Participant.objects.filter(study=study, prolific_pid=params.pid).order_by())
    found = next((p for p in theirs if p.session_id == params.session_id), None)
    if found:
        return found
    if study.prolific_study_id and params.study_id != study.prolific_study_id:
        raise EntryRefused(gettext("This link belongs to a different Prolific study."))
    if not study.is_live:
        raise EntryRefused(gettext("This study is not open for participants at the moment."))
    if any(p.status not in SESSION_ENDED for p in theirs):
        raise SessionInUse(gettext(OTHER_SESSION))
    if admit is not None:
        admit()
    # A study already full turns a new arrival away at once (with the screened-out code), rather than
    # after consent and demographics; `allocate` still has the last word for those let in.
    full = not has_room(study=study)
    try:
        # A savepoint only inside a caller's transaction: alone, the INSERT needs no BEGIN and COMMIT.
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            return Participant.objects.create(
                study=study,
                prolific_pid=params.pid,
                prolific_study_id=params.study_id,
                session_id=params.session_id,
                status=participation.arrival_status(study_full=full),
                finished_at=timezone.now() if full else None,
            )
    except IntegrityError:
        # The same person arriving twice at once, another session of theirs started meanwhile, or a
        # submission id already used by someone else.
        found = _session_participant(study, params)
        if found:
            return found
        if _open_session_of(study, params.pid):
            raise SessionInUse(gettext(OTHER_SESSION)) from None
        raise EntryRefused(gettext("This Prolific submission is already in use.")) from None


def _session_participant(study: Study, params: ProlificParams) -> Participant | None:
    return (
        Participant.objects.filter(study=study, prolific_pid=params.pid, session_id=params.session_id)
        .order_by()
        .first()
    )


def _open_session_of(study: Study, pid: str) -> bool:
    return Participant.objects.filter(study=study, prolific_pid=pid).exclude(status__in=SESSION_ENDED).exists()


def start_preview(*, study: Study) -> Participant:
    """A researcher's walk through the survey: it never touches cells or analysis."""
    if not study.cells.exists():
        raise ValidationError("The study has no comparison plan yet: a preview needs it to be live.")
    return Participant.objects.create(study=study, prolific_pid=f"preview-{secrets.token_hex(8)}", is_preview=True)


def current_step(participant: Participant, assignments: list[Assignment] | None = None) -> Step:
    """Where the participant is; `assignments`, when given, are their pages as just read or written."""
    step = participation.STATUSES[participant.status].step
    if step is not None:
        return Step(step)
    if assignments is None:
        assignments = list(participant.assignments.select_related("vignette").order_by("position"))
    done = sum(a.status == Assignment.Status.COMPLETED for a in assignments)
    current = next((a for a in assignments if a.status == Assignment.Status.RESERVED), None)
    if current is not None:
        return Step(StepName.PAIR, current, done=done, total=len(assignments), assignments=tuple(assignments))
    if assignments and done == len(assignments):
        return Step(StepName.ATTENTION, done=done, total=len(assignments), assignments=tuple(assignments))
    return Step(StepName.ENDED)


def _locked(participant: Participant) -> Participant:
    return locked_again(participant)


@transaction.atomic
def record_consent(*, participant: Participant, consent: bool, anonymised: bool) -> Participant:
    return _consent_under_lock(_locked(participant), consent=consent, anonymised=anonymised)


def consent_answered(*, participant_id: int | None, slug: str, consent: bool, anonymised: bool) -> Participant | None:
    """`record_consent` for the participant of the study `slug` with this id (None when there is none).

    The participant is read once, under the row lock the answer is recorded with: wherever they are,
    an answer that does not fit their status changes nothing, and they are sent on from where they are.
    """
    if participant_id is None:
        return None
    with transaction.atomic():
        try:
            participant = locked_participant(participant_id)
        except Participant.DoesNotExist:
            return None
        if participant.study.slug != slug:
            return None
        return _consent_under_lock(participant, consent=consent, anonymised=anonymised)


def _consent_under_lock(participant: Participant, *, consent: bool, anonymised: bool) -> Participant:
    event = Event.CONSENT_GIVEN if consent else Event.CONSENT_REFUSED
    if not participation.allows(participant.status, event):
        return participant  # answered already (a double submit)
    participant.consented_at = timezone.now() if consent else None
    participant.anonymised_data_consent = anonymised if consent else None
    answers = ("consented_at", "anonymised_data_consent")
    return participation.apply_event(participant=participant, event=event, locked=True, also_save=answers).participant


def record_demographics(*, participant: Participant, demographics: dict, now: datetime | None = None) -> Participant:
    """Store the answers and allocate the judging pages in one transaction; a full study screens the participant out."""
    return demographics_recorded(participant=participant, demographics=demographics, now=now)[0]


def demographics_recorded(
    *, participant: Participant, demographics: dict, now: datetime | None = None
) -> tuple[Participant, Step]:
    """`record_demographics`, and where the participant is now: the pages just allocated are not read again."""
    now = now or timezone.now()
    allocated: list[Assignment] = []

    def store(locked: Participant, event: Event) -> participation.Transition:
        locked.demographics = demographics
        return participation.apply_event(participant=locked, event=event, locked=True, also_save=("demographics",))

    def with_pages(locked: Participant) -> Participant | None:
        if not participation.allows(locked.status, Event.PAGES_ALLOCATED):
            return locked  # answered already (a double submit)
        # Pages and status change together, so a participant who may still get pages holds none.
        pages = reserve_pages(participant=locked, now=now)
        if pages is None:
            return None
        allocated[:] = pages
        return store(locked, Event.PAGES_ALLOCATED).participant

    stored = allocation.with_pages(participant=participant, attempt=with_pages, now=now)
    if stored is None:
        with transaction.atomic():  # the study is full
            stored = _locked(participant)
            if participation.allows(stored.status, Event.STUDY_FULL):
                stored = store(stored, Event.STUDY_FULL).participant
    return stored, current_step(stored, allocated or None)


def mark_shown(*, assignment: Assignment, now: datetime | None = None) -> None:
    """Seconds on a page count from when it was first shown, however often it is reloaded."""
    now = now or timezone.now()
    if Assignment.objects.filter(pk=assignment.pk, shown_at__isnull=True).update(shown_at=now):
        assignment.shown_at = now


def page_content(assignment: Assignment) -> dict:
    """What a judging page shows: the vignette, then Answer A (first) and Answer B (second)."""
    # From the study's snapshot (every shown answer has its features: going live checked it).
    study = assignment.participant.study
    first, second = assignment.first_answer_id, assignment.second_answer_id
    vignette, by_id = page_of(study, assignment.vignette_id, [first, second])
    return {"vignette": vignette, "answers": [("A", by_id[first]), ("B", by_id[second])]}


def attention_options(study: Study) -> list[str]:
    options = study.attention_options
    return list(options) if isinstance(options, list) and len(options) == 2 else list(DEFAULT_ATTENTION_OPTIONS)


def assess_quality(
    *,
    anonymised_consent: bool | None,
    attention_choice: int,
    positions: list[str],
    seconds_total: float,
    minimum_seconds: float,
    fast_fraction: float,
    median_seconds: float | None,
) -> list[dict]:
    """Every quality flag a finished participant raises, most serious first, each with its reason."""
    Exclusion = Participant.Exclusion
    flags = []
    if not anonymised_consent:
        flags.append((Exclusion.NO_ANONYMISED_CONSENT, "did not consent to anonymised use of their data"))
    if attention_choice != CORRECT_ATTENTION_CHOICE:
        flags.append((Exclusion.FAILED_ATTENTION, f"chose option {attention_choice} in the attention check"))
    if positions and len(set(positions)) == 1:
        flags.append((Exclusion.STRAIGHT_LINING, f"picked the {positions[0]} answer in all {len(positions)} choices"))
    if seconds_total < minimum_seconds:
        flags.append(
            (
                Exclusion.TOO_FAST,
                f"judged in {seconds_total:.0f} s, under the study's minimum of {minimum_seconds:.0f} s",
            )
        )
    elif median_seconds is not None and seconds_total < fast_fraction * median_seconds:
        flags.append(
            (
                Exclusion.TOO_FAST,
                f"judged in {seconds_total:.0f} s, under {fast_fraction:.0%} of the median {median_seconds:.0f} s",
            )
        )
    return [{"code": str(code), "reason": reason} for code, reason in flags]


def finish_participant(
    *,
    participant: Participant,
    attention_choice: int,
    now: datetime | None = None,
    pages: Sequence[Assignment] | None = None,
) -> Participant:
    """The attention check's answer closes the survey: quality flags, the exclusion, the outcome.

    An excluded participant's cells reopen for someone else; their judgments stay stored. `pages`: the
    participant's pages as the check page read them (a completed page never changes again; the status,
    read under the lock, says whether the participant is still at the check).
    """
    now = now or timezone.now()
    with transaction.atomic():
        participant = _locked(participant)
        if participation.STATUSES[participant.status].step is not None:
            return participant  # finished already, or not judging yet
        if pages is None:
            pages = list(participant.assignments.only("status", "seconds"))
        if not pages or any(page.status != Assignment.Status.COMPLETED for page in pages):
            return participant  # not at the check yet
        study = participant.study
        positions = list(
            Judgment.objects.filter(assignment__participant=participant).values_list("winner_position", flat=True)
        )
        seconds_total = sum((page.seconds for page in pages if page.seconds is not None), 0.0)
        flags = assess_quality(
            anonymised_consent=participant.anonymised_data_consent,
            attention_choice=attention_choice,
            positions=positions,
            seconds_total=seconds_total,
            minimum_seconds=study.minimum_seconds,
            fast_fraction=study.fast_fraction_of_median,
            median_seconds=median_seconds(study=study),
        )
        failed = attention_choice != CORRECT_ATTENTION_CHOICE
        participant.attention_choice = attention_choice
        participant.first_position_share = (
            positions.count(Judgment.Position.FIRST) / len(positions) if positions else None
        )
        participant.seconds_total = seconds_total
        event = Event.ATTENTION_FAILED if failed else Event.ATTENTION_PASSED
        answers = ("attention_choice", "first_position_share", "seconds_total")
        participant = participation.apply_event(
            participant=participant, event=event, now=now, locked=True, also_save=answers
        ).participant
        if flags:
            # Flagged participants are excluded: their judgments stay stored, their places reopen.
            event = Event.QUALITY_FLAGGED
            participant = participation.apply_event(
                participant=participant, event=event, flags=flags, locked=True
            ).participant
    return participant


def completion_code(participant: Participant) -> str:
    """The Prolific completion code for the participant's outcome ("" when the study has none set)."""
    return participation.completion_code(participant, participant.study)
