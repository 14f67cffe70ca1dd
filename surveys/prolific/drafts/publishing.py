"""Publish the Prolific draft (the PUBLISH transition), once the study is live here; preview it first."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from django.core.exceptions import ValidationError

from ...models import AuditEvent, Study
from ...services.audit import record_event
from .. import client
from ..ownership import owned_prolific_study
from .body import build_draft
from .pay import hourly_rate_of, money, rate_warnings
from .remote import UNPUBLISHED, remember, require_draft


@dataclass(frozen=True)
class OnProlific:
    """A Prolific study as Prolific holds it, for the publish page."""

    prolific_id: str
    status: str
    places: int
    minutes: int
    reward: int
    currency: str
    codes: list
    warnings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def hourly_rate(self) -> Decimal | None:
        return hourly_rate_of(reward=self.reward, minutes=self.minutes) if self.minutes else None


def preview_publish(*, study: Study, study_url: str) -> OnProlific:
    """What publishing would put in front of participants, and what stands in the way (one GET)."""
    prolific_id = owned_prolific_study(study)
    remote = client.get_study(prolific_id)
    held = OnProlific(
        prolific_id=prolific_id,
        status=str(remote.get("status") or ""),
        places=int(remote.get("total_available_places") or 0),
        minutes=int(remote.get("estimated_completion_time") or 0),
        reward=int(remote.get("reward") or 0),
        currency=study.prolific_currency,
        codes=remote.get("completion_codes") or [],
    )
    if held.status != UNPUBLISHED:
        held.problems.append(f"the Prolific study is {held.status}, not a draft")
    if study.status != Study.Status.LIVE:
        held.problems.append(f"the study is {study.status} here: go live first")
    if held.hourly_rate is not None:
        held.warnings.extend(rate_warnings(currency=held.currency, hourly_rate=held.hourly_rate))
    now = build_draft(study=study, study_url=study_url)
    changed = [
        f"{name} {theirs} on Prolific, {ours} now"
        for name, theirs, ours in [
            ("places", held.places, now.places.total),
            ("minutes", held.minutes, now.minutes),
            ("reward", money(held.reward, held.currency), now.reward_text),
        ]
        if theirs != ours
    ]
    if changed:
        held.warnings.append(
            "the draft on Prolific differs from the study now (" + "; ".join(changed) + "): run "
            "'Create or update Prolific draft' first to send the new figures"
        )
    return held


def publish(*, study: Study, by=None) -> str:
    """Publish the Prolific draft: only for a study that is live here, so the link leads to open pages."""
    prolific_id = owned_prolific_study(study)
    if study.status != Study.Status.LIVE:
        raise ValidationError(
            f"Study '{study.slug}' is {study.status} here: go live first, or Prolific's participants would "
            "find the survey closed."
        )
    require_draft(prolific_id, client.get_study(prolific_id))
    remote = client.publish_study(prolific_id)
    status = str(remote.get("status") or "PUBLISHING")
    remember(study, prolific_status=status)
    details = {"prolific_study_id": prolific_id, "prolific_status": status}
    record_event(action=AuditEvent.Action.PROLIFIC_PUBLISHED, user=by, study=study, **details)
    return status
