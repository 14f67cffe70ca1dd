"""A judge's way through the study, as tables: what each status means, and from status × event → to status.

Every change of a Participant's `status`, `exclusion`, `flags`, `prolific_status` or `review_status`
is made here: the judging pages, the allocation's expiry sweep, Prolific's webhooks and
reconciliation, the review and the admin all name an `Event` and call `apply_event`, which looks
the rule up in `RULES`. A rule says the new status (or none: it stays), whether the participant's
places in cells are given back (reserved pages are released; completed pages stay completed with
their judgments, but no longer count toward their cell), whether it ends the participant's part
(`finished_at`), and the exclusion it records.

To add an outcome: a value in `Participant.Status` (a migration for its label), its row in
`STATUSES`, and the rules that lead to it in `RULES`; a Prolific status that should change ours is
one line in `PROLIFIC_EVENTS`.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ..models import Assignment, AuditEvent, Cell, Participant, Study
from .audit import record_event
from .errors import TransitionNotAllowed

Status = Participant.Status
Exclusion = Participant.Exclusion
ProlificStatus = Participant.ProlificStatus
ReviewStatus = Participant.ReviewStatus


class StepName(StrEnum):
    """Where a participant is in the survey: it picks the view (and, at the end, the template)."""

    CONSENT = "consent"
    NO_CONSENT = "no-consent"
    DEMOGRAPHICS = "demographics"
    PAIR = "pair"
    ATTENTION = "attention"
    COMPLETE = "complete"
    FULL = "full"
    ENDED = "ended"


class Event(StrEnum):
    STUDY_FULL = "study-full"
    CONSENT_GIVEN = "consent-given"
    CONSENT_REFUSED = "consent-refused"
    PAGES_ALLOCATED = "pages-allocated"
    ATTENTION_PASSED = "attention-passed"
    ATTENTION_FAILED = "attention-failed"
    QUALITY_FLAGGED = "quality-flagged"  # the exclusion is the first flag's code
    RESERVATION_EXPIRED = "reservation-expired"
    RETURNED = "returned"  # on Prolific
    TIMED_OUT = "timed-out"  # on Prolific
    EXCLUDED_BY_RESEARCHER = "excluded-by-researcher"
    NOT_ON_PROLIFIC = "not-on-prolific"  # reconciliation: no submission of the study for this session


@dataclass(frozen=True)
class StatusInfo:
    # The step a participant in this status is at; None: judging, where the pages decide (pair or attention).
    step: StepName | None
    # Study fields holding the Prolific completion code for this outcome, the first one set wins;
    # () for no code. An outcome with a code is one Prolific holds for our review.
    codes: tuple[str, ...] = ()


STATUSES: dict[str, StatusInfo] = {
    Status.STARTED: StatusInfo(StepName.CONSENT),
    Status.NO_CONSENT: StatusInfo(StepName.NO_CONSENT, ("no_consent_code",)),
    Status.CONSENTED: StatusInfo(StepName.DEMOGRAPHICS),
    Status.JUDGING: StatusInfo(None),
    Status.COMPLETED: StatusInfo(StepName.COMPLETE, ("completion_code",)),
    Status.FAILED_ATTENTION: StatusInfo(StepName.COMPLETE, ("failed_attention_code", "completion_code")),
    Status.SCREENED_OUT: StatusInfo(StepName.FULL, ("screened_out_code",)),
    Status.RETURNED: StatusInfo(StepName.ENDED),
    Status.TIMED_OUT: StatusInfo(StepName.ENDED),
    Status.EXPIRED: StatusInfo(StepName.ENDED),
    Status.UNVERIFIED: StatusInfo(StepName.ENDED),
}

# Outcomes that finished with a completion code, so Prolific holds them for our review.
REVIEWABLE = [status for status, info in STATUSES.items() if info.codes]

ANY = "*"  # a rule for an event that may come whatever the participant's status


@dataclass(frozen=True)
class Rule:
    to: str | None  # the new status; None: it stays
    gives_back: bool  # the participant's places in cells are given back
    ends: bool = False  # the participant's part is over: finished_at is set
    exclusion: str = ""  # recorded unless the participant is excluded already


RULES: dict[tuple[str, Event], Rule] = {
    (Status.STARTED, Event.STUDY_FULL): Rule(Status.SCREENED_OUT, gives_back=True, ends=True),
    (Status.STARTED, Event.CONSENT_GIVEN): Rule(Status.CONSENTED, gives_back=False),
    (Status.STARTED, Event.CONSENT_REFUSED): Rule(Status.NO_CONSENT, gives_back=True, ends=True),
    (Status.CONSENTED, Event.PAGES_ALLOCATED): Rule(Status.JUDGING, gives_back=False),
    (Status.CONSENTED, Event.STUDY_FULL): Rule(Status.SCREENED_OUT, gives_back=True, ends=True),
    (Status.JUDGING, Event.ATTENTION_PASSED): Rule(Status.COMPLETED, gives_back=False, ends=True),
    (Status.JUDGING, Event.ATTENTION_FAILED): Rule(Status.FAILED_ATTENTION, gives_back=True, ends=True),
    (ANY, Event.QUALITY_FLAGGED): Rule(None, gives_back=True),
    (ANY, Event.RESERVATION_EXPIRED): Rule(Status.EXPIRED, gives_back=True),
    (ANY, Event.RETURNED): Rule(Status.RETURNED, gives_back=True, exclusion=Exclusion.RETURNED),
    (ANY, Event.TIMED_OUT): Rule(Status.TIMED_OUT, gives_back=True, exclusion=Exclusion.RETURNED),
    (ANY, Event.EXCLUDED_BY_RESEARCHER): Rule(None, gives_back=True, exclusion=Exclusion.RESEARCHER),
    # Invented ids: Prolific never heard of the session, so it cannot count and its places reopen.
    (ANY, Event.NOT_ON_PROLIFIC): Rule(Status.UNVERIFIED, gives_back=True, exclusion=Exclusion.NO_SUBMISSION),
}

# Prolific submission statuses that change ours; any other is only recorded (prolific_status).
PROLIFIC_EVENTS: dict[str, Event] = {
    ProlificStatus.RETURNED: Event.RETURNED,
    ProlificStatus.TIMED_OUT: Event.TIMED_OUT,
}


def rule_for(status: str, event: Event) -> Rule | None:
    """The rule for `event` in `status`, or None when the event cannot happen there."""
    return RULES.get((status, event)) or RULES.get((ANY, event))


def allows(status: str, event: Event) -> bool:
    return rule_for(status, event) is not None


def arrival_status(*, study_full: bool) -> str:
    """The status a new participant is created with: a study already full screens them out at once."""
    rule = rule_for(Status.STARTED, Event.STUDY_FULL)
    return rule.to if study_full and rule and rule.to else Status.STARTED


def completion_code(participant: Participant, study: Study) -> str:
    """The Prolific completion code for the participant's outcome ("" when the study has none set)."""
    for field in STATUSES[participant.status].codes:
        if getattr(study, field):
            return getattr(study, field)
    return ""


@dataclass(frozen=True)
class Transition:
    participant: Participant  # as stored after the event
    released: int = 0  # places in cells given back


def apply_event(
    *,
    participant: Participant,
    event: Event,
    flags: list[dict] | None = None,
    now: datetime | None = None,
    locked: bool = False,
    also_save: tuple[str, ...] = (),
) -> Transition:
    """Apply `event` to the participant by its rule, in one transaction under the participant's row lock.

    `flags` (for QUALITY_FLAGGED) are stored, and the first one's code becomes the exclusion.
    Raises TransitionNotAllowed when no rule covers the event in the participant's status.
    Applying the same event twice changes nothing the second time and gives nothing back.
    `locked`: the caller holds the row lock and passes the participant as read under it (no second
    read); its fields named in `also_save` are stored in the same UPDATE.
    """
    with transaction.atomic(savepoint=not locked):  # under the caller's lock, inside the caller's transaction
        if not locked:
            participant = Participant.objects.locked().get(pk=participant.pk)
        rule = rule_for(participant.status, event)
        if rule is None:
            raise TransitionNotAllowed(f"A participant who is {participant.status} cannot be {event}.")
        fields = list(also_save)
        if rule.to and participant.status != rule.to:
            participant.status = rule.to
            fields.append("status")
        if rule.ends:
            participant.finished_at = now or timezone.now()
            fields.append("finished_at")
        if flags is not None:
            participant.flags = flags
            fields.append("flags")
        exclusion = rule.exclusion or (flags[0]["code"] if flags else "")
        if exclusion and not participant.exclusion:
            participant.exclusion = exclusion
            fields.append("exclusion")
        if fields:
            participant.save(update_fields=fields)
        released = give_back_places(participant=participant, completed=True) if rule.gives_back else 0
    return Transition(participant, released)


def locked_participant(participant_id: int, study: Study | None = None) -> Participant:
    """The participant with their study, their row locked until the transaction ends (call inside one).

    `study`: the participant's study as the page read it already, attached rather than read again (the
    lock is the participant's alone: the study's row is never locked, and a live study does not change).
    Raises Participant.DoesNotExist when there is no such participant (of `study`, when given).
    """
    if study is None:
        return Participant.objects.locked().select_related("study").get(pk=participant_id)
    participant = Participant.objects.locked().get(pk=participant_id, study_id=study.pk)
    participant.study = study
    return participant


def locked_again(participant: Participant) -> Participant:
    """`participant` read again under their row lock; their study, when read already, is kept, not read again."""
    study = participant.study if Participant.study.is_cached(participant) else None
    return locked_participant(participant.pk, study)


def give_back_places(*, participant: Participant, completed: bool) -> int:
    """Give back the participant's places in cells; returns how many. Call under the participant's lock.

    Reserved pages are given back and marked released. With `completed`, completed pages are given
    back too: they stay completed with their judgments, but no longer count toward their cell.
    A second call changes nothing.
    """
    released = 0
    for assignment in participant.assignments.filter(counts_toward_cell=True).order_by("cell_id"):
        if assignment.status == Assignment.Status.RESERVED:
            released += _give_back(assignment, counter="reserved", new_status=Assignment.Status.RELEASED)
        elif assignment.status == Assignment.Status.COMPLETED and completed:
            released += _give_back(assignment, counter="completed", new_status=Assignment.Status.COMPLETED)
    # Pages of a preview (never counted) are closed too, so they are not offered again.
    participant.assignments.filter(status=Assignment.Status.RESERVED, counts_toward_cell=False).update(
        status=Assignment.Status.RELEASED
    )
    return released


def _give_back(assignment: Assignment, *, counter: str, new_status: str) -> int:
    claimed = Assignment.objects.filter(pk=assignment.pk, status=assignment.status, counts_toward_cell=True).update(
        counts_toward_cell=False, status=new_status
    )
    if not claimed:
        return 0
    Cell.objects.filter(pk=assignment.cell_id, **{f"{counter}__gte": 1}).update(**{counter: F(counter) - 1})
    return 1


def record_prolific_status(*, participant: Participant, status: str, sent_at: datetime | None = None) -> bool:
    """Store what Prolific says the submission's status is (and when Prolific sent it); whether the status changed."""
    rows = Participant.objects.filter(pk=participant.pk)
    if sent_at is not None:
        rows.update(prolific_status_at=sent_at)
    return bool(rows.exclude(prolific_status=status).update(prolific_status=status))


def record_prolific_statuses(*, study: Study, session_ids: Iterable[str], status: str, observed_at: datetime) -> int:
    """The same for many submissions of a study (reconciliation), stamped with when the status was observed; how
    many changed. A row holding a status stamped later (a newer webhook) is left as it is."""
    rows = Participant.objects.filter(study=study, is_preview=False, session_id__in=list(session_ids)).exclude(
        prolific_status_at__gt=observed_at
    )
    changed = rows.exclude(prolific_status=status).update(prolific_status=status, prolific_status_at=observed_at)
    rows.filter(prolific_status=status).exclude(prolific_status_at=observed_at).update(prolific_status_at=observed_at)
    return changed


def record_review(*, participants: list[Participant], review_status: str, prolific_status: str | None) -> int:
    """What we told Prolific about submissions not reviewed before (and the status that follows); how many."""
    fields = {"review_status": review_status}
    if prolific_status:
        fields["prolific_status"] = prolific_status
    return Participant.objects.filter(
        pk__in=[p.pk for p in participants], review_status=ReviewStatus.NOT_REVIEWED
    ).update(**fields)


def exclude_by_researcher(*, participants: Iterable[Participant], by=None) -> int:
    """Exclude these participants (their judgments leave the analysis, their places reopen); audited per study,
    with whom: an exclusion changes what a participant is counted as, and under the study's policy what Prolific
    is told about their pay. Returns the places reopened."""
    reopened = 0
    per_study: dict[int, tuple[Study, list[str]]] = {}
    for participant in participants:
        reopened += apply_event(participant=participant, event=Event.EXCLUDED_BY_RESEARCHER).released
        study, who = per_study.setdefault(participant.study_id, (participant.study, []))
        who.append(participant.prolific_pid or f"participant {participant.pk}")
    for study, who in per_study.values():
        record_event(action=AuditEvent.Action.PARTICIPANT_EXCLUDED, user=by, study=study, participants=who)
    return reopened
