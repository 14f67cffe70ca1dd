"""Create the Prolific draft (POST) or update it (PATCH) while it is one; preview what would be sent."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from ...models import Study
from .. import client
from ..client import ProlificError
from ..ownership import NotOurProlificStudy, owned_prolific_study, record_created_draft
from .body import Draft, build_draft
from .remote import UNPUBLISHED, NotADraft, remember, require_draft


@dataclass(frozen=True)
class Sent:
    prolific_id: str
    created: bool
    status: str
    draft: Draft


def send_draft(*, study: Study, study_url: str, by=None) -> Sent:
    """Create the Prolific draft (POST) or update it (PATCH); store its id and status once Prolific agrees.

    The study's row is locked for the call, so two clicks cannot create two Prolific studies.
    """
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        draft = build_draft(study=study, study_url=study_url)
        if draft.problems:
            raise ValidationError(f"Study '{study.slug}' was not sent to Prolific: " + "; ".join(draft.problems) + ".")
        if study.prolific_study_id:
            prolific_id, created = owned_prolific_study(study), False
            require_draft(prolific_id, client.get_study(prolific_id))
            remote = client.update_study(prolific_id, draft.payload)
        else:
            remote = _create(draft.payload)
            prolific_id, created = str(remote.get("id") or ""), True
            if not prolific_id:
                raise ProlificError(f"Prolific created the study but its answer has no id: {str(remote)[:200]}")
            record_created_draft(study=study, prolific_id=prolific_id, by=by)
        status = str(remote.get("status") or UNPUBLISHED)
        # The minutes advertised are the ones the review's rules read (one failed check rejectable under 5).
        remember(study, prolific_status=status, estimated_minutes=draft.minutes)
    return Sent(prolific_id=prolific_id, created=created, status=status, draft=draft)


def preview_draft(*, study: Study, study_url: str) -> Draft:
    """build_draft, plus a problem when the study's Prolific study is no longer a draft (one GET)."""
    draft = build_draft(study=study, study_url=study_url)
    if study.prolific_study_id:
        try:
            prolific_id = owned_prolific_study(study)
            require_draft(prolific_id, client.get_study(prolific_id))
        except NotOurProlificStudy as exc:
            draft.problems.append(" ".join(exc.messages).rstrip("."))
        except NotADraft as exc:
            draft.problems.append(str(exc).rstrip("."))
    return draft


def _create(payload: dict) -> dict:
    try:
        return client.create_study(payload)
    except client.Retryable as exc:
        # A timeout or a 5xx may come after Prolific made the study: trying blindly could make a second one.
        raise client.Retryable(
            f"{exc} Prolific may have created the draft all the same: look for '{payload['internal_name']}' "
            "among your studies on Prolific before trying again.",
            status_code=exc.status_code,
            body=exc.body,
        ) from exc
