"""Review decisions out: approve valid submissions in bulk, handle invalid ones by the study's
policy within Prolific's rules (`decide_review`, `rejection_allowed`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from ..models import AuditEvent, Participant, Study
from ..services import participation
from ..services.audit import record_event
from ..services.participation import REVIEWABLE
from . import client
from .client import ProlificError
from .ownership import NotOurProlificStudy, owned_prolific_study
from .statuses import SubmissionStatus, reconcile_study

log = logging.getLogger(__package__)  # one logger for all of surveys.prolific, as before the split

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


ReviewStatus = Participant.ReviewStatus  # what we told Prolific (Participant.review_status)


APPROVE, REJECT, REQUEST_RETURN = "approve", "reject", "request-return"

# Per reason: Prolific's rejection category, the return reason we give, and the rejection message.
REASONS: dict[str, tuple[str, str, str]] = {
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
    # Too fast is flagged only when exceptionally fast against this study's own times. Withdrawn consent and
    # researcher exclusions never justify a rejection: ask for a return instead.
    return reason in (Participant.Exclusion.TOO_FAST, Participant.Exclusion.STRAIGHT_LINING)


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


@dataclass(frozen=True)
class ReviewPlan:
    """What 'Review submissions on Prolific' would do now, for its confirmation page: nothing is sent yet."""

    study: Study
    refreshed: str  # what reading Prolific's submissions changed here
    decisions: list[tuple[Participant, Decision]]
    reward: int | None  # per submission, pence or cents, as Prolific holds it (None: not read)
    currency: str

    def of(self, action: str) -> list[Participant]:
        return [participant for participant, decision in self.decisions if decision.action == action]


def plan_review(*, study: Study) -> ReviewPlan:
    """Refresh the statuses from Prolific and decide each submission awaiting review, without telling Prolific.

    Raises ValidationError when there is nothing to review or no Prolific study, ProlificError when Prolific
    cannot be read."""
    prolific_id = owned_prolific_study(study)  # NotOurProlificStudy is a ValidationError
    refreshed = str(reconcile_study(study=study))
    awaiting = list(_unreviewed(study).filter(prolific_status=SubmissionStatus.AWAITING_REVIEW))
    if not awaiting:
        raise ValidationError("no submission is awaiting review on Prolific: nothing to do")
    reward = client.get_study(prolific_id).get("reward")
    return ReviewPlan(
        study=study,
        refreshed=refreshed,
        decisions=[(p, decide_review(participant=p, study=study)) for p in awaiting],
        reward=int(reward) if reward is not None else None,
        currency=study.prolific_currency,
    )


def review_submissions(*, study: Study, user=None, only: set[int] | None = None) -> Reviewed:
    """Approve valid finished submissions in bulk; handle invalid ones by the study's policy.

    Only submissions not reviewed yet and awaiting review on Prolific are acted on, so a second
    review calls Prolific for nothing already done. Statuses are refreshed from Prolific first.
    `only` (participant ids) keeps it to the submissions the researcher confirmed: one that arrived after the
    confirmation page waits for the next review. Audited, with the counts and who they were.
    """
    report = Reviewed()
    pending = _unreviewed(study)
    if not pending.exists():
        report.messages.append(f"Study '{study.slug}': nothing left to review.")
        return report
    try:
        prolific_id = owned_prolific_study(study)
    except NotOurProlificStudy as exc:
        report.messages.append(" ".join(exc.messages) + " Nothing was reviewed.")
        return report
    try:
        report.messages.append(str(reconcile_study(study=study)))
    except ProlificError as exc:
        report.messages.append(f"Could not read the submissions from Prolific, so nothing was reviewed: {exc}")
        return report
    awaiting = list(_unreviewed(study).filter(prolific_status=SubmissionStatus.AWAITING_REVIEW))
    if only is not None:
        awaiting = [p for p in awaiting if p.pk in only]
    decisions = [(p, decide_review(participant=p, study=study)) for p in awaiting]
    by = f" by {user}" if user is not None else ""
    done: dict[str, list[str]] = {APPROVE: [], REJECT: [], REQUEST_RETURN: []}

    to_approve = [p for p, d in decisions if d.action == APPROVE]
    if to_approve:
        try:
            client.bulk_approve(submission_ids=[p.session_id for p in to_approve])
        except ProlificError as exc:
            report.failed += len(to_approve)
            report.messages.append(f"Bulk approval of {len(to_approve)} submissions failed: {exc}")
        else:
            report.approved += _record(to_approve, ReviewStatus.APPROVED, SubmissionStatus.APPROVED)
            done[APPROVE] += [p.prolific_pid for p in to_approve]
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
                said = f"Rejected {participant.prolific_pid} ({decision.rejection_category})"
            else:
                client.request_return(participant.session_id, reasons=list(decision.return_reasons))
                report.returns_requested += _record([participant], ReviewStatus.RETURN_REQUESTED, None)
                said = f"Asked {participant.prolific_pid} to return ({'; '.join(decision.return_reasons)})"
        except ProlificError as exc:
            report.failed += 1
            report.messages.append(f"{participant.prolific_pid}: {exc}")
            continue
        done[decision.action].append(participant.prolific_pid)
        report.messages.append(said + (f" — {decision.note}" if decision.note else "") + ".")
    log.info("prolific review of %s%s: %s", study.slug, by, report)
    if report.calls:
        record_event(
            action=AuditEvent.Action.PROLIFIC_REVIEWED,
            user=user,
            study=study,
            prolific_study_id=prolific_id,
            approved=done[APPROVE],
            rejected=done[REJECT],
            asked_to_return=done[REQUEST_RETURN],
            failed=report.failed,
        )
    return report


def _unreviewed(study: Study):
    return Participant.objects.filter(
        study=study, is_preview=False, status__in=REVIEWABLE, review_status=ReviewStatus.NOT_REVIEWED
    ).exclude(session_id="")


def _record(participants: list[Participant], review_status: str, prolific_status: str | None) -> int:
    return participation.record_review(
        participants=participants, review_status=review_status, prolific_status=prolific_status
    )
