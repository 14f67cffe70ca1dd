"""The Prolific study as MoralJudge last saw it: the draft status, and what is stored once Prolific said yes."""

from __future__ import annotations

from django.utils import timezone

from ...models import Study
from ..client import ProlificError

UNPUBLISHED = "UNPUBLISHED"  # Prolific's status of a draft


class NotADraft(ProlificError):
    """The Prolific study is published (or beyond): only its places can change."""


def require_draft(prolific_id: str, remote: dict) -> None:
    status = remote.get("status")
    if status != UNPUBLISHED:
        raise NotADraft(
            f"The Prolific study {prolific_id} is {status}, no longer a draft: Prolific lets only its places "
            "change now (action 'Add places on Prolific')."
        )


def remember(study: Study, **fields) -> None:
    Study.objects.filter(pk=study.pk).update(prolific_synced_at=timezone.now(), **fields)
