"""Study teams: which studies a user sees, and on which they may act. The one place these rules live.

Every researcher surface (admin, dashboard, power, LLM-judge pages, plots, exports, API) asks here:
`studies_for(user)` for what to show, `studies_for(user, acting=True)` or `can_act` for what may be
changed, started or sent. Superusers see and act on every study; other staff only on their teams'.
Why plain querysets rather than django-guardian or django-rules: docs/teams.md.
"""

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models, transaction

from ..models import AuditEvent, Study, StudyMembership
from .audit import record_event
from .role_groups import sync_role_groups

Role = StudyMembership.Role
ACTING_ROLES = (Role.OWNER, Role.RESEARCHER)


class NotOnTeam(PermissionDenied):
    """The user may see the study but not do this to it (a viewer), or the study is not theirs."""


def studies_for(user, *, acting: bool = False) -> models.QuerySet[Study]:
    """The studies `user` may see (acting=True: may act on); superusers: all; anyone not staff: none."""
    if not getattr(user, "is_active", False) or not user.is_staff:
        return Study.objects.none()
    if user.is_superuser:
        return Study.objects.all()
    memberships = StudyMembership.objects.filter(user=user)
    if acting:
        memberships = memberships.filter(role__in=ACTING_ROLES)
    return Study.objects.filter(pk__in=memberships.values("study_id"))


def scoped(queryset: models.QuerySet, user, *, study_path: str = "study", acting: bool = False) -> models.QuerySet:
    """`queryset` (of any model reaching a study through `study_path`) narrowed to the user's studies."""
    if getattr(user, "is_superuser", False) and user.is_active:
        return queryset
    return queryset.filter(**{f"{study_path}__in": studies_for(user, acting=acting)})


def role_of(user, study: Study) -> str | None:
    """The user's role on the study's team ("owner" for a superuser), or None when not on it."""
    if not getattr(user, "is_active", False) or not user.is_staff:
        return None
    if user.is_superuser:
        return Role.OWNER
    return StudyMembership.objects.filter(user=user, study=study).values_list("role", flat=True).first()


def can_act(user, study: Study) -> bool:
    return role_of(user, study) in ACTING_ROLES


def check_can_act(user, study: Study) -> None:
    """Raise NotOnTeam unless the user is an owner or researcher of the study (or a superuser)."""
    if not can_act(user, study):
        raise NotOnTeam(f"Study '{study.slug}': only its owners and researchers may do this (you may only view it).")


def can_change_team(user, study: Study) -> bool:
    return role_of(user, study) == Role.OWNER


@transaction.atomic
def set_member(*, study: Study, user, role: str, by=None, **details) -> StudyMembership:
    """Put `user` on the study's team with `role` (or change their role); audited as a team change (with
    `details`, such as how they were invited), and in the role's permission group."""
    if not user.is_staff:
        raise ValidationError(f"{user} is not staff: only staff users can be on a study's team.")
    before = StudyMembership.objects.filter(study=study, user=user).first()
    if before and before.role == role:
        return before
    if before and before.role == Role.OWNER and role != Role.OWNER:
        _keep_an_owner(study, leaving=user)
    membership, _ = StudyMembership.objects.update_or_create(study=study, user=user, defaults={"role": role})
    sync_role_groups(user)
    change = {"member": user.get_username(), "role": role, "was": before.role if before else None, **details}
    record_event(action=AuditEvent.Action.TEAM_CHANGED, user=by, study=study, **change)
    return membership


@transaction.atomic
def remove_member(*, study: Study, user, by=None) -> None:
    """Take `user` off the study's team; the last owner cannot leave (someone must be able to change it)."""
    membership = StudyMembership.objects.filter(study=study, user=user).first()
    if membership is None:
        return
    if membership.role == Role.OWNER:
        _keep_an_owner(study, leaving=user)
    membership.delete()
    sync_role_groups(user)
    change = {"member": user.get_username(), "role": None, "was": membership.role}
    record_event(action=AuditEvent.Action.TEAM_CHANGED, user=by, study=study, **change)


def _keep_an_owner(study: Study, *, leaving) -> None:
    others = StudyMembership.objects.filter(study=study, role=Role.OWNER).exclude(user=leaving)
    if not others.exists():
        raise ValidationError(f"Study '{study.slug}' needs an owner: make someone else owner first.")
