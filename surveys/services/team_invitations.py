"""Inviting a colleague onto a study's team by username or e-mail (docs/teams.md, "Inviting a colleague").

An owner names a colleague and a role: the account is found (by username, or by e-mail) or created
(staff, no password yet), put on the team through `set_member` (audited, in the role's permission group),
and handed a link: choosing a password for a new account, signing in for one that has a password. With
mail configured the link goes by e-mail; otherwise (or when sending fails) the owner is shown it to pass on.
"""

import smtplib
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from ..models import Study, StudyMembership
from .teams import NotOnTeam, can_change_team, set_member

Role = StudyMembership.Role
NO_MAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"


class JoinTokens(PasswordResetTokenGenerator):
    """Links for choosing a first password: used once (the password changes), valid PASSWORD_RESET_TIMEOUT
    (3 days); salted apart from password-reset tokens so that neither opens the other's page."""

    key_salt = "surveys.team_invitations.JoinTokens"


join_tokens = JoinTokens()


@dataclass(frozen=True)
class TeamInvitation:
    user: Any  # the user model's instance (AUTH_USER_MODEL)
    role: str
    new_account: bool
    sets_password: bool  # the link chooses a first password (else it signs in to the study's page)
    link: str
    mailed_to: str  # "" when no e-mail went out
    shown_link: str  # the link for the owner to pass on: "" when mailed, or when it is not theirs to give
    note: str  # why no e-mail went, or why no link is shown


def mail_is_configured() -> bool:
    return settings.EMAIL_BACKEND != NO_MAIL_BACKEND


def invite_colleague(*, study: Study, who: str, role: str, by, site_url: str) -> TeamInvitation:
    """Put the colleague named by `who` (a username or an e-mail address) on the study's team as `role`."""
    if not can_change_team(by, study):
        raise NotOnTeam(f"Study '{study.slug}': only its owners invite colleagues.")
    if role not in Role.values:
        raise ValidationError(f"Unknown role {role!r}: one of {', '.join(Role.values)}.")
    with transaction.atomic():
        user, new_account = find_or_create_colleague(who)
        if not user.is_active:
            raise ValidationError(f"The account {user.get_username()} is deactivated: a superuser reactivates it.")
        if not user.is_staff:  # on a team means signing in to the admin
            user.is_staff = True
            user.save(update_fields=["is_staff"])
        set_member(study=study, user=user, role=role, by=by, invited_as=who.strip(), new_account=new_account)
    sets_password = not user.has_usable_password()
    link = site_url.rstrip("/") + (join_path(user) if sets_password else study_path(study))
    mailed_to, note = _mail(study=study, user=user, role=role, by=by, link=link, sets_password=sets_password)
    shown = "" if mailed_to else link
    if shown and sets_password and not may_hand_out_join_link(by, user):
        shown = ""
        note += (
            f" {user.get_username()} has not chosen a password yet and is also on studies you do not own: "
            "their link is for whoever invited them first (or a superuser) to give."
        )
    return TeamInvitation(user, role, new_account, sets_password, link, mailed_to, shown, note.strip())


def find_or_create_colleague(who: str):
    """The account `who` names: by username, or by e-mail address (when `who` has an @); else a new staff
    account without a password, named `who` (an e-mail address is also its e-mail)."""
    users = get_user_model()
    who = who.strip()
    if not who:
        raise ValidationError("Name a colleague: their username or e-mail address.")
    by_name = users.objects.filter(username=who).first()
    if by_name is not None:
        return by_name, False
    email = ""
    if "@" in who:
        validate_email(who)
        found = list(users.objects.filter(email__iexact=who)[:2])
        if len(found) > 1:
            raise ValidationError(f"Several accounts have the e-mail address {who}: invite one by username.")
        if found:
            return found[0], False
        email = who
    user = users(username=who, email=email, is_staff=True)
    user.set_unusable_password()
    user.full_clean(exclude=["password"])  # the username's characters and length
    user.save()
    return user, True


def may_hand_out_join_link(by, user) -> bool:
    """Whoever sees a first-password link can sign in as the account: only its owners' owners see it
    (every study the account is on is one `by` owns), or a superuser."""
    if by.is_superuser:
        return True
    owned = StudyMembership.objects.filter(user=by, role=Role.OWNER).values("study_id")
    return not StudyMembership.objects.filter(user=user).exclude(study_id__in=owned).exists()


def join_path(user) -> str:
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("surveys:team-join", kwargs={"uidb64": uid, "token": join_tokens.make_token(user)})


def study_path(study: Study) -> str:
    return reverse("admin:surveys_study_change", args=[study.pk])


def _mail(*, study: Study, user, role: str, by, link: str, sets_password: bool) -> tuple[str, str]:
    """Send the invitation; returns (the address it went to, or "", and why not)."""
    if not mail_is_configured():
        return "", "No e-mail was sent: mail is not configured on this server (EMAIL_HOST)."
    if not user.email:
        return "", f"No e-mail was sent: {user.get_username()} has no e-mail address."
    name = " ".join(study.name.split())  # one line: it goes into the subject
    step = (
        f"Choose your password here (the link works once, for {settings.PASSWORD_RESET_TIMEOUT // 86400} days):"
        if sets_password
        else "Sign in to see it:"
    )
    body = (
        f'{by.get_username()} has added you to the team of the study "{name}" on MoralJudge as '
        f"{_lower_first(Role(role).label)}.\n\n{step}\n{link}\n\nYour username: {user.get_username()}\n"
    )
    try:
        send_mail(f'MoralJudge: you are on the team of "{name}"', body, None, [user.email])
    except (smtplib.SMTPException, OSError) as exc:
        return "", f"The e-mail to {user.email} could not be sent ({exc.__class__.__name__})."
    return user.email, ""


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]
