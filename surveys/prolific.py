"""Prolific: submission statuses in (webhook and reconciliation) and review decisions out.

- `apply_submission_status` records what Prolific says about a submission; RETURNED and TIMED-OUT
  give the participant's cells back at once (allocation.release_participant).
- `reconcile_study` walks a study's submissions list and applies the same, for missed webhooks.
- `review_submissions` approves valid submissions in one bulk call and handles invalid ones by the
  study's policy, within Prolific's rules (see `decide_review`).
- `verify_webhook` checks Prolific's webhook signature: base64(HMAC-SHA256(secret, timestamp + body)),
  sent as X-Prolific-Request-Signature with X-Prolific-Request-Timestamp (UNIX seconds).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import time
from dataclasses import dataclass, field

from django.db import IntegrityError, models, transaction

from . import prolific_client as client
from .allocation import release_participant
from .models import Participant, ProlificEvent, Study
from .prolific_client import ProlificError

log = logging.getLogger(__name__)

WEBHOOK_TOLERANCE_SECONDS = 5 * 60
SUBMISSION_STATUS_CHANGE = "submission.status.change"

# Prolific allows rejecting for a single failed attention check only in studies under five minutes;
# longer studies need two or more failed checks, and MoralJudge has one check per participant.
SINGLE_ATTENTION_FAILURE_REJECTABLE_UNDER_MINUTES = 5


POLICY_HELP = (
    "Prolific's rules, applied by 'Review submissions on Prolific': valid submissions are approved in one "
    "bulk call. Being screened out (study full) or withdrawing consent is never a reason to reject: those "
    "participants are asked to return the submission. A single failed attention check may justify rejection "
    "only in a study whose estimated minutes are under 5; in longer studies it gets a return request. 'Too "
    "fast' means exceptionally fast against this study's own times (minimum seconds and fraction of the "
    "median), never one quick page; it and straight-lining may be rejected. Under the 'Reject' policy only "
    "those reasons are rejected, with Prolific's category and a message; everything else is asked to return."
)


class SubmissionStatus(models.TextChoices):
    """A submission's status on Prolific, as the API and webhooks spell it."""

    RESERVED = "RESERVED", "Reserved"
    ACTIVE = "ACTIVE", "Active"
    AWAITING_REVIEW = "AWAITING REVIEW", "Awaiting review"
    APPROVED = "APPROVED", "Approved"
    PARTIALLY_APPROVED = "PARTIALLY APPROVED", "Partially approved"
    REJECTED = "REJECTED", "Rejected"
    RETURNED = "RETURNED", "Returned"
    TIMED_OUT = "TIMED-OUT", "Timed out"
    SCREENED_OUT = "SCREENED OUT", "Screened out"


class ReviewStatus(models.TextChoices):
    """What we told Prolific about a submission (Participant.review_status)."""

    NOT_REVIEWED = "", "Not reviewed"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"
    RETURN_REQUESTED = "return-requested", "Asked to return"


# Prolific statuses that end a participant's part at once: their cells reopen for someone else.
RELEASING = {
    SubmissionStatus.RETURNED: (Participant.Status.RETURNED, Participant.Exclusion.RETURNED),
    SubmissionStatus.TIMED_OUT: (Participant.Status.TIMED_OUT, Participant.Exclusion.RETURNED),
}

# Our outcomes that finished with a completion code, so Prolific holds them for review.
REVIEWABLE = [
    Participant.Status.COMPLETED,
    Participant.Status.FAILED_ATTENTION,
    Participant.Status.SCREENED_OUT,
    Participant.Status.NO_CONSENT,
]


# --- statuses in --------------------------------------------------------------------------------


@dataclass
class Applied:
    outcome: str  # "duplicate", "unknown-submission", "unchanged", "recorded" or "released"
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
) -> Applied:
    """Record a submission's Prolific status; RETURNED and TIMED-OUT reopen the participant's cells.

    `session_id` is Prolific's submission id. With `event_id`, a repeated event changes nothing.
    Without `study` (a webhook says only the submission), the participant is found by submission id.
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
                    )
            except IntegrityError:
                return Applied("duplicate")
        participant = _find_participant(study=study, session_id=session_id, participant_id=participant_id)
        if participant is None:
            return Applied("unknown-submission")
        changed = (
            Participant.objects.filter(pk=participant.pk).exclude(prolific_status=status).update(prolific_status=status)
        )
        if not participant.session_id:
            Participant.objects.filter(pk=participant.pk, session_id="").update(session_id=session_id)
        if status in RELEASING:
            new_status, exclusion = RELEASING[status]
            released = release_participant(participant=participant, status=new_status, exclusion=exclusion)
            return Applied("released", participant, released)
    return Applied("recorded" if changed else "unchanged", participant)


def _find_participant(*, study: Study | None, session_id: str, participant_id: str) -> Participant | None:
    participants = Participant.objects.filter(is_preview=False)
    if study is not None:
        participants = participants.filter(study=study)
    found = participants.filter(session_id=session_id).first() if session_id else None
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

    def __str__(self) -> str:
        return (
            f"Study '{self.study}': {self.seen} submissions on Prolific, {self.changed} changed status, "
            f"{self.released} cells reopened, {self.unknown} never reached MoralJudge."
        )


def reconcile_study(*, study: Study) -> Reconciled:
    """Apply the status of every submission Prolific lists for the study (catches missed webhooks)."""
    result = Reconciled(study=study.slug)
    submissions = client.list_submissions(study.prolific_study_id)
    known = dict(
        Participant.objects.filter(study=study, is_preview=False)
        .exclude(session_id="")
        .values_list("session_id", "prolific_status")
    )
    plain: dict[str, list[str]] = {}  # status -> known submission ids: one UPDATE per status
    for submission in submissions:
        result.seen += 1
        status = submission.status.strip().upper()
        if submission.id in known and known[submission.id] == status:
            continue  # already applied (a release happened in the same transaction)
        if submission.id in known and status not in RELEASING:
            plain.setdefault(status, []).append(submission.id)
            continue
        applied = apply_submission_status(
            study=study, session_id=submission.id, participant_id=submission.participant_id, status=status
        )
        if applied.outcome == "unknown-submission":
            result.unknown += 1
        elif applied.outcome in ("recorded", "released"):
            result.changed += 1
            result.released += applied.released
    for status, session_ids in plain.items():
        result.changed += (
            Participant.objects.filter(study=study, is_preview=False, session_id__in=session_ids)
            .exclude(prolific_status=status)
            .update(prolific_status=status)
        )
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
        except client.Permanent as exc:
            log.error("prolific reconcile of %s failed: %s", study.slug, exc)
    if retry is not None:
        raise retry
    return results


# --- webhooks -----------------------------------------------------------------------------------


class WebhookNotConfigured(Exception):
    """PROLIFIC_WEBHOOK_SECRET is not set."""


class InvalidWebhook(Exception):
    """The request does not carry a valid, fresh Prolific signature."""


def sign_webhook(*, body: bytes, timestamp: str, secret: str) -> str:
    """Prolific's signature: base64 of HMAC-SHA256 over the timestamp followed by the body."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verify_webhook(*, body: bytes, timestamp: str, signature: str, secret: str, now: float | None = None) -> None:
    if not secret:
        raise WebhookNotConfigured("PROLIFIC_WEBHOOK_SECRET is not set: webhooks cannot be verified.")
    if not timestamp or not signature:
        raise InvalidWebhook("Missing X-Prolific-Request-Timestamp or X-Prolific-Request-Signature header.")
    try:
        sent_at = float(timestamp)
    except ValueError as exc:
        raise InvalidWebhook("X-Prolific-Request-Timestamp is not a UNIX timestamp.") from exc
    now = time.time() if now is None else now
    if abs(now - sent_at) > WEBHOOK_TOLERANCE_SECONDS:
        raise InvalidWebhook("The webhook timestamp is more than 5 minutes from our clock (stale or replayed).")
    candidates = [body]
    try:  # Prolific's own example signs json.dumps of the parsed body; accept that form too
        candidates.append(json.dumps(json.loads(body)).encode())
    except ValueError:
        pass
    for candidate in candidates:
        if hmac.compare_digest(sign_webhook(body=candidate, timestamp=timestamp, secret=secret), signature):
            return
    raise InvalidWebhook("The webhook signature does not match.")


def webhook_event_id(payload: dict) -> str:
    """Prolific's event id when the payload has one; otherwise the event itself, as a digest.

    A submission reaches each status once, so the same (type, submission, status) is a repeat.
    """
    for key in ("event_id", "id"):
        if payload.get(key):
            return str(payload[key])[:128]
    key = "|".join(str(payload.get(k, "")) for k in ("event_type", "resource_id", "status"))
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def receive_webhook_event(*, payload: dict) -> Applied:
    """A verified webhook: apply submission status changes once; other event types are ignored."""
    if payload.get("event_type") != SUBMISSION_STATUS_CHANGE:
        return Applied("ignored")
    return apply_submission_status(
        study=None,
        session_id=payload["resource_id"],
        participant_id=payload.get("participant_id", ""),
        status=payload["status"],
        event_id=webhook_event_id(payload),
        payload=payload,
    )


# --- review -------------------------------------------------------------------------------------

APPROVE, REJECT, REQUEST_RETURN = "approve", "reject", "request-return"

# Per reason: Prolific's rejection category, the return reason we give, and the rejection message.
REASONS = {
    Participant.Exclusion.FAILED_ATTENTION: (
        "FAILED_CHECK",
        "Did not pass the attention check",
        "you did not pass the attention check, which asked you to choose the second of two options",
    ),
    Participant.Exclusion.TOO_FAST: (
        "TOO_QUICKLY",
        "Completed the study exceptionally fast",
        "you completed the study exceptionally fast compared with the other participants of this study",
    ),
    Participant.Exclusion.STRAIGHT_LINING: (
        "LOW_EFFORT",
        "Chose only the first or only the second answer throughout",
        "you chose only the first or only the second answer on every question of every page",
    ),
    Participant.Exclusion.RESEARCHER: ("OTHER", "Excluded by the researcher", ""),
    Participant.Exclusion.NO_ANONYMISED_CONSENT: ("", "Withdrew consent", ""),
}
NEVER_REJECTED = {Participant.Exclusion.NO_ANONYMISED_CONSENT, Participant.Exclusion.RESEARCHER}


@dataclass(frozen=True)
class Decision:
    action: str
    reasons: tuple[str, ...] = ()
    rejection_category: str = ""
    message: str = ""
    return_reasons: tuple[str, ...] = ()
    note: str = ""


def rejection_allowed(*, study: Study, reason: str) -> bool:
    """Prolific's rules, explicitly: which exclusion reasons may justify a rejection in this study."""
    if reason == Participant.Exclusion.FAILED_ATTENTION:
        # One failed attention check may justify rejection only in a study under five minutes.
        return study.estimated_minutes < SINGLE_ATTENTION_FAILURE_REJECTABLE_UNDER_MINUTES
    if reason in (Participant.Exclusion.TOO_FAST, Participant.Exclusion.STRAIGHT_LINING):
        # Too fast is flagged only when exceptionally fast against this study's own times.
        return True
    return False  # withdrawn consent, researcher exclusions: ask for a return instead


def decide_review(*, participant: Participant, study: Study) -> Decision:
    """What to tell Prolific about one finished submission, under the study's policy and Prolific's rules."""
    policy = study.invalid_policy
    if participant.status == Participant.Status.SCREENED_OUT:
        # Being screened out (or finding the study full) is never a reason to reject.
        if policy == Study.InvalidPolicy.APPROVE:
            return Decision(APPROVE, ("screened-out",))
        return Decision(REQUEST_RETURN, ("screened-out",), return_reasons=("The study was full when you arrived",))
    if participant.status == Participant.Status.NO_CONSENT:
        if policy == Study.InvalidPolicy.APPROVE:
            return Decision(APPROVE, ("no-consent",))
        return Decision(REQUEST_RETURN, ("no-consent",), return_reasons=("Withdrew consent",))
    reasons = _reasons(participant)
    if not reasons:
        return Decision(APPROVE)
    if policy == Study.InvalidPolicy.APPROVE:
        return Decision(APPROVE, tuple(reasons), note="approved by the study's policy")
    if Participant.Exclusion.NO_ANONYMISED_CONSENT in reasons:
        # Consent withdrawn outweighs every other flag: such a participant is asked to return, never rejected.
        return Decision(REQUEST_RETURN, tuple(reasons), return_reasons=("Withdrew consent",))
    return_reasons = tuple(REASONS.get(r, ("", r, ""))[1] for r in reasons)
    if policy == Study.InvalidPolicy.REJECT:
        for reason in reasons:
            if reason not in NEVER_REJECTED and rejection_allowed(study=study, reason=reason):
                category, _, why = REASONS[reason]
                return Decision(
                    REJECT, tuple(reasons), rejection_category=category, message=_rejection_message(study, why)
                )
        note = "rejection not allowed by Prolific's rules"
        if Participant.Exclusion.FAILED_ATTENTION in reasons:
            note += (
                f": one failed attention check justifies rejection only in studies under "
                f"{SINGLE_ATTENTION_FAILURE_REJECTABLE_UNDER_MINUTES} minutes "
                f"(this one is advertised at {study.estimated_minutes})"
            )
        return Decision(REQUEST_RETURN, tuple(reasons), return_reasons=return_reasons, note=note)
    return Decision(REQUEST_RETURN, tuple(reasons), return_reasons=return_reasons)


def _reasons(participant: Participant) -> list[str]:
    """Every quality reason the participant raised, most serious first: flags, exclusion and status."""
    reasons = [str(flag.get("code")) for flag in participant.flags or [] if isinstance(flag, dict) and flag.get("code")]
    if participant.exclusion:
        reasons.append(participant.exclusion)
    if participant.status == Participant.Status.FAILED_ATTENTION:
        reasons.append(Participant.Exclusion.FAILED_ATTENTION.value)
    reasons = [r for r in reasons if r != Participant.Exclusion.RETURNED]
    return list(dict.fromkeys(reasons))


def _rejection_message(study: Study, why: str) -> str:
    message = (
        f"Thank you for taking part in '{study.name}'. We could not accept this submission because {why}. "
        "The instructions explained what was needed before you started. If you think this is a mistake, "
        "please message us through Prolific and we will look at it again."
    )
    return message.ljust(client.MIN_REJECTION_MESSAGE)


@dataclass
class Reviewed:
    approved: int = 0
    rejected: int = 0
    returns_requested: int = 0
    failed: int = 0
    messages: list[str] = field(default_factory=list)

    @property
    def calls(self) -> int:
        return self.approved + self.rejected + self.returns_requested


def review_submissions(*, study: Study, user=None) -> Reviewed:
    """Approve valid finished submissions in bulk; handle invalid ones by the study's policy.

    Only submissions not reviewed yet and awaiting review on Prolific are acted on, so a second
    review calls Prolific for nothing already done. Statuses are refreshed from Prolific first.
    """
    report = Reviewed()
    pending = _unreviewed(study)
    if not pending.exists():
        report.messages.append(f"Study '{study.slug}': nothing left to review.")
        return report
    if not study.prolific_study_id:
        report.messages.append(f"Study '{study.slug}' has no Prolific study id: set it before reviewing.")
        return report
    try:
        report.messages.append(str(reconcile_study(study=study)))
    except ProlificError as exc:
        report.messages.append(f"Could not read the submissions from Prolific, so nothing was reviewed: {exc}")
        return report
    awaiting = list(_unreviewed(study).filter(prolific_status=SubmissionStatus.AWAITING_REVIEW))
    decisions = [(p, decide_review(participant=p, study=study)) for p in awaiting]
    by = f" by {user}" if user is not None else ""

    to_approve = [p for p, d in decisions if d.action == APPROVE]
    if to_approve:
        try:
            client.bulk_approve(submission_ids=[p.session_id for p in to_approve])
        except ProlificError as exc:
            report.failed += len(to_approve)
            report.messages.append(f"Bulk approval of {len(to_approve)} submissions failed: {exc}")
        else:
            report.approved += _record(to_approve, ReviewStatus.APPROVED, SubmissionStatus.APPROVED)
            report.messages.append(f"Approved {len(to_approve)} submissions in one bulk call{by}.")

    for participant, decision in decisions:
        if decision.action == APPROVE:
            continue
        try:
            if decision.action == REJECT:
                client.reject_submission(
                    participant.session_id, message=decision.message, rejection_category=decision.rejection_category
                )
                report.rejected += _record([participant], ReviewStatus.REJECTED, SubmissionStatus.REJECTED)
                done = f"Rejected {participant.prolific_pid} ({decision.rejection_category})"
            else:
                client.request_return(participant.session_id, reasons=list(decision.return_reasons))
                report.returns_requested += _record([participant], ReviewStatus.RETURN_REQUESTED, None)
                done = f"Asked {participant.prolific_pid} to return ({'; '.join(decision.return_reasons)})"
        except ProlificError as exc:
            report.failed += 1
            report.messages.append(f"{participant.prolific_pid}: {exc}")
            continue
        report.messages.append(done + (f" — {decision.note}" if decision.note else "") + ".")
    log.info("prolific review of %s%s: %s", study.slug, by, report)
    return report


def _unreviewed(study: Study):
    return Participant.objects.filter(
        study=study, is_preview=False, status__in=REVIEWABLE, review_status=ReviewStatus.NOT_REVIEWED
    ).exclude(session_id="")


def _record(participants: list[Participant], review_status: str, prolific_status: str | None) -> int:
    fields = {"review_status": review_status}
    if prolific_status:
        fields["prolific_status"] = prolific_status
    return Participant.objects.filter(
        pk__in=[p.pk for p in participants], review_status=ReviewStatus.NOT_REVIEWED
    ).update(**fields)
