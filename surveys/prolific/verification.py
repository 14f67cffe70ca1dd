"""Only verified submissions count: a participant is verified when Prolific lists a submission of the
study with the participant's SESSION_ID and PROLIFIC_PID. One still unlisted after
PROLIFIC_VERIFY_GRACE_MINUTES (invented ids, or a link passed round outside Prolific) is excluded with
"no Prolific submission" through the participant lifecycle, and its places reopen.
Reconciliation (statuses.reconcile_study) calls this; the dashboard shows `verification_counts`.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from ..models import Participant, Study
from ..services import participation
from ..services.participation import Event

Exclusion = Participant.Exclusion


def exclude_unverified(*, study: Study, verified: set[str], now: datetime | None = None) -> tuple[int, int]:
    """Exclude the study's participants whose session is not in `verified` and who arrived before the
    grace period; (how many were excluded, places given back). Run only with Prolific's full list."""
    since = (now or timezone.now()) - timedelta(minutes=settings.PROLIFIC_VERIFY_GRACE_MINUTES)
    unlisted = (
        Participant.objects.filter(study=study, is_preview=False, started_at__lt=since)
        .exclude(session_id__in=verified)
        .exclude(status=Participant.Status.UNVERIFIED)
        .order_by("pk")
    )
    excluded = released = 0
    for participant in unlisted:
        released += participation.apply_event(participant=participant, event=Event.NOT_ON_PROLIFIC, now=now).released
        excluded += 1
    return excluded, released


@dataclass(frozen=True)
class VerificationCounts:
    verified: int  # Prolific lists their submission (webhook or reconciliation)
    awaiting: int  # not heard of on Prolific yet
    unverified: int  # excluded: no Prolific submission after the grace period

    def __str__(self) -> str:
        return f"{self.verified} verified on Prolific, {self.awaiting} awaiting, {self.unverified} unverified"


def verification_counts(study: Study) -> VerificationCounts:
    participants = Participant.objects.filter(study=study, is_preview=False).order_by()
    unverified = participants.filter(exclusion=Exclusion.NO_SUBMISSION).count()
    verified = participants.exclude(prolific_status="").exclude(exclusion=Exclusion.NO_SUBMISSION).count()
    return VerificationCounts(verified, participants.count() - verified - unverified, unverified)
