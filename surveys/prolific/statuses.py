"""Submission statuses in: from a webhook (`apply_submission_status`) or by walking a study's
submissions list (`reconcile_study`, for missed webhooks). What a status does to the participant is
the participant lifecycle's (services/participation.py: PROLIFIC_EVENTS, RULES)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from ..models import Participant, ProlificEvent, Study
from ..services import participation
from ..services.participation import PROLIFIC_EVENTS
from . import client, verification
from .ownership import NotOurProlificStudy, owned_prolific_study

log = logging.getLogger(__package__)  # one logger for all of surveys.prolific, as before the split

SUBMISSION_STATUS_CHANGE = "submission.status.change"


# A submission's status on Prolific, as the API and webhooks spell it (Participant.prolific_status).
SubmissionStatus = Participant.ProlificStatus


class ParticipantMismatch(Exception):
    """The submission is ours, but Prolific names another participant for it than the one who entered."""


@dataclass
class Applied:
    outcome: str  # "duplicate", "unknown-submission", "stale", "unchanged", "recorded" or "released"
    participant: Participant | None = None
    released: int = 0


def apply_submission_status(
    *,
    study: Study | None,
    session_id: str,
    participant_id: str = "",
    status: str,
    event_id: str | None = None,
    payload: dict | None = None,
    sent_at: datetime | None = None,
) -> Applied:
    """Record a submission's Prolific status; one in PROLIFIC_EVENTS (RETURNED, TIMED-OUT) also changes ours.

    `session_id` is Prolific's submission id. With `event_id`, a repeated event changes nothing.
    With `sent_at` (when Prolific sent the event), an event older than the one applied last is "stale": recorded, so
    a redelivery is a duplicate, but it changes nothing (Prolific does not guarantee the order of its webhooks).
    Without `study` (a webhook says only the submission), the participant is found by submission id.
    Raises ParticipantMismatch (and records nothing, not even the event) when `participant_id` is not
    the participant who entered with that submission id: someone else's PROLIFIC_PID was used.
    """
    status = status.strip().upper()
    with transaction.atomic():
        if event_id:
            try:
                with transaction.atomic():
                    ProlificEvent.objects.create(
                        event_id=event_id,
                        event_type=SUBMISSION_STATUS_CHANGE,
                        resource_id=session_id,
                        status=status,
                        payload=payload or {},
                        sent_at=sent_at,
                    )
            except IntegrityError:
                return Applied("duplicate")
        participant = _find_participant(study=study, session_id=session_id, participant_id=participant_id)
        if participant is None or (study is None and not _attributable(participant)):
            return Applied("unknown-submission")
        if participant_id and participant_id != participant.prolific_pid:
            log.warning(
                "prolific submission %s names participant %s, but %s entered with it: not applied",
                session_id,
                participant_id,
                participant.prolific_pid,
            )
            raise ParticipantMismatch(f"Submission {session_id} belongs to another participant.")
        if sent_at is not None:
            participant = Participant.objects.select_for_update(of=("self",)).get(pk=participant.pk)
            if participant.prolific_status_at is not None and sent_at < participant.prolific_status_at:
                log.info(
                    "prolific event for %s sent %s is older than the status applied: not applied", session_id, sent_at
                )
                return Applied("stale", participant)
        changed = participation.record_prolific_status(participant=participant, status=status, sent_at=sent_at)
        if not participant.session_id:
            Participant.objects.filter(pk=participant.pk, session_id="").update(session_id=session_id)
        if status in PROLIFIC_EVENTS:
            released = participation.apply_event(participant=participant, event=PROLIFIC_EVENTS[status]).released
            return Applied("released", participant, released)
    return Applied("recorded" if changed else "unchanged", participant)


def _attributable(participant: Participant) -> bool:
    """A webhook's submission counts for the participant's study only when that study's Prolific study is its own
    (ownership.py) and the participant entered with that study's STUDY_ID."""
    study = participant.study
    if not study.prolific_study_id:
        return True  # not on Prolific yet: the submission id alone names the participant
    try:
        prolific_id = owned_prolific_study(study)
    except NotOurProlificStudy:
        log.warning("prolific event for %s: study %s's Prolific study is not its own", participant.pk, study.slug)
        return False
    return participant.prolific_study_id in ("", prolific_id)


def _find_participant(*, study: Study | None, session_id: str, participant_id: str) -> Participant | None:
    participants = Participant.objects.filter(is_preview=False)
    if study is not None:
        participants = participants.filter(study=study)
    found = participants.select_related("study").filter(session_id=session_id).first() if session_id else None
    if found is None and study is not None and participant_id:
        # Only someone who arrived without a SESSION_ID: another submission id is another submission.
        found = participants.filter(prolific_pid=participant_id, session_id="").first()
    return found


@dataclass
class Reconciled:
    study: str
    seen: int = 0
    changed: int = 0
    released: int = 0
    unknown: int = 0
    mismatched: int = 0
    unverified: int = 0

    def __str__(self) -> str:
        return (
            f"Study '{self.study}': {self.seen} submissions on Prolific, {self.changed} changed status, "
            f"{self.released} cells reopened, {self.unknown} never reached MoralJudge, "
            f"{self.mismatched} with another participant's id, {self.unverified} participants excluded "
            "with no Prolific submission."
        )


def reconcile_study(*, study: Study, now: datetime | None = None) -> Reconciled:
    """Apply the status of every submission Prolific lists for the study (catches missed webhooks), then
    exclude participants with no submission of the study after the grace period (verification.py).

    Each status is stamped with when it was observed (the submissions list has no time of its own for a status:
    the moment the list was asked for), as a webhook's X-Timestamp is: a webhook sent before then arrives stale
    and changes nothing, and a status a newer webhook applied meanwhile is not overwritten."""
    result = Reconciled(study=study.slug)
    observed_at = timezone.now()  # before the request: only what Prolific said before we asked is older
    submissions = client.list_submissions(owned_prolific_study(study))
    known = {
        session_id: (pid, status)
        for session_id, pid, status in Participant.objects.filter(study=study, is_preview=False)
        .exclude(session_id="")
        .values_list("session_id", "prolific_pid", "prolific_status")
    }
    verified: set[str] = set()  # session ids Prolific lists for the participant who entered with them
    plain: dict[str, list[str]] = {}  # status -> known submission ids: one UPDATE per status
    for submission in submissions:
        result.seen += 1
        status = submission.status.strip().upper()
        pid, known_status = known.get(submission.id, (None, None))
        if pid is not None and submission.participant_id and submission.participant_id != pid:
            result.mismatched += 1
            log.warning(
                "prolific submission %s is %s's, but %s entered with it", submission.id, submission.participant_id, pid
            )
            continue
        if pid is not None:
            verified.add(submission.id)
        if pid is not None and (known_status == status or status not in PROLIFIC_EVENTS):
            plain.setdefault(status, []).append(submission.id)  # stamped; a release already applied is not redone
            continue
        try:
            applied = apply_submission_status(
                study=study,
                session_id=submission.id,
                participant_id=submission.participant_id,
                status=status,
                sent_at=observed_at,
            )
        except ParticipantMismatch:
            result.mismatched += 1
            continue
        if applied.outcome == "unknown-submission":
            result.unknown += 1
        else:
            verified.add(submission.id)  # found by submission id, or by PID for one who arrived without it
        if applied.outcome in ("recorded", "released"):
            result.changed += 1
            result.released += applied.released
    for status, session_ids in plain.items():
        result.changed += participation.record_prolific_statuses(
            study=study, session_ids=session_ids, status=status, observed_at=observed_at
        )
    result.unverified, released = verification.exclude_unverified(study=study, verified=verified, now=now)
    result.released += released
    log.info("prolific reconcile %s", result)
    return result


def reconcile_live_studies() -> list[Reconciled]:
    """Reconcile every live study that has a Prolific study id; one study's failure doesn't stop the rest."""
    results, retry = [], None
    for study in Study.objects.filter(status=Study.Status.LIVE).exclude(prolific_study_id=""):
        try:
            results.append(reconcile_study(study=study))
        except client.Retryable as exc:
            log.warning("prolific reconcile of %s will be retried: %s", study.slug, exc)
            retry = retry or exc
        except (client.Permanent, NotOurProlificStudy) as exc:
            log.error("prolific reconcile of %s failed: %s", study.slug, exc)
    if retry is not None:
        raise retry
    return results
