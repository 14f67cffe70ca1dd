"""Expert invitations: one link, one browser, revocable, expiring.

The first browser that opens an invitation gets a random key in a signed cookie, and the invitation
keeps it (`browser_key`); from then on only that browser may open the link or write the expert's
pages. Another browser is told the invitation is in use. A researcher can revoke a link, or revoke
and reissue it (the expert's respondent moves to the new link, so a new browser resumes their pages).
A link cannot be opened INVITATION_MAX_AGE_DAYS after it was issued (0: never expires).
"""

import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.utils.translation import gettext, gettext_noop

from ..models import Invitation, Respondent
from .errors import EntryRefused
from .respondent_survey import start_invited_respondent

COOKIE_SALT = "surveys.invitation.browser"
# What the expert reads, in the study's language (each a whole sentence, so that it translates as one).
WITHDRAWN = gettext_noop("This invitation was withdrawn; ask the researcher for a new link.")
EXPIRED = gettext_noop("This invitation has expired; ask the researcher for a new link.")
IN_USE = gettext_noop("This invitation is in use; ask the researcher for a new link.")


class InvitationInUse(EntryRefused):
    """Another browser holds this invitation."""


class InvitationWithdrawn(EntryRefused):
    """The researcher revoked the invitation, or it expired."""


def cookie_name(invitation: Invitation) -> str:
    return f"mj_invitation_{invitation.pk}"


def expires_at(invitation: Invitation) -> datetime | None:
    days = settings.INVITATION_MAX_AGE_DAYS
    return invitation.created_at + timedelta(days=days) if days > 0 else None


def state(invitation: Invitation, now: datetime | None = None) -> str:
    """In words, for the admin: revoked, expired, in use or not opened yet."""
    now = now or timezone.now()
    if invitation.revoked_at:
        return f"Revoked {invitation.revoked_at:%Y-%m-%d %H:%M}"
    ends = expires_at(invitation)
    if ends and now >= ends:
        return f"Expired {ends:%Y-%m-%d}"
    if invitation.used_at:
        return f"Opened {invitation.used_at:%Y-%m-%d %H:%M} (bound to that browser)"
    return "Not yet opened" + (f" (expires {ends:%Y-%m-%d})" if ends else "")


def _unusable(invitation: Invitation) -> str | None:
    """Why the invitation can no longer be used (revoked or expired), in the expert's language; None when it can."""
    if invitation.revoked_at:
        return gettext(WITHDRAWN)
    ends = expires_at(invitation)
    if ends and timezone.now() >= ends:
        return gettext(EXPIRED)
    return None


def _check_usable(invitation: Invitation) -> None:
    problem = _unusable(invitation)
    if problem:
        raise InvitationWithdrawn(problem)


def _same_browser(invitation: Invitation, browser_key: str | None) -> bool:
    return bool(browser_key and invitation.browser_key and constant_time_compare(browser_key, invitation.browser_key))


@transaction.atomic
def open_invitation(*, invitation: Invitation, browser_key: str | None) -> tuple[Respondent, str]:
    """The invitation's respondent and the key this browser keeps; binds the invitation on first opening.

    Raises InvitationInUse for any browser but the first, InvitationWithdrawn when revoked or expired.
    """
    invitation = Invitation.objects.select_for_update().select_related("study", "system").get(pk=invitation.pk)
    _check_usable(invitation)
    if invitation.browser_key:
        if not _same_browser(invitation, browser_key):
            raise InvitationInUse(gettext(IN_USE))
    else:
        invitation.browser_key = secrets.token_urlsafe(32)
        invitation.used_at = invitation.used_at or timezone.now()
        invitation.save(update_fields=["browser_key", "used_at"])
    return start_invited_respondent(invitation=invitation), invitation.browser_key


def browser_may_continue(respondent: Respondent, browser_key: str | None) -> str | None:
    """Why this browser may not go on writing an invited respondent's pages, or None when it may.

    Checked on every page and every POST: a page opened before the invitation expired or was revoked stores nothing.
    """
    invitation = respondent.invitation  # no query when there is none
    if invitation is None:
        return None
    problem = _unusable(invitation)
    if problem:
        return problem
    if not _same_browser(invitation, browser_key):
        return gettext(IN_USE)
    return None


def revoke_invitation(*, invitation: Invitation) -> Invitation:
    Invitation.objects.filter(pk=invitation.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    invitation.refresh_from_db()
    return invitation


@transaction.atomic
def reissue_invitation(*, invitation: Invitation, created_by=None) -> Invitation:
    """Revoke the link and issue a new one for the same person; their pages so far move to it."""
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    revoke_invitation(invitation=invitation)
    fresh = Invitation.objects.create(
        study_id=invitation.study_id, system_id=invitation.system_id, label=invitation.label, created_by=created_by
    )
    Respondent.objects.filter(invitation=invitation).update(invitation=fresh)
    return fresh
