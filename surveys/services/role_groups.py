"""The shipped permission groups, one per team role, so that nobody ticks model permissions by hand.

A role on a study's team (surveys/models/teams.py) says what a user may do to *that* study; Django's admin
also asks for model permissions. Each role therefore has a group ("MoralJudge owner", "MoralJudge
researcher", "MoralJudge viewer") holding the model permissions the role needs, and a user is in the
group of every role they hold on some team (kept so by set_member and remove_member). The groups give
the upper bound; the team rules (surveys/services/teams.py) narrow it per study. docs/teams.md.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db.models import Q

from ..models import StudyMembership

Role = StudyMembership.Role

# The apps whose models are a study's rows or choices for it (llm_collect etc. by label: no import).
STUDY_APPS = ("surveys", "llm_collect", "llm_judging", "analysis")
GROUP_PREFIX = "MoralJudge "


def group_name(role: str) -> str:
    return f"{GROUP_PREFIX}{role}"


def permissions_of(role: str):
    """What a role's group holds: viewers look; researchers also add, change and delete rows (not
    studies); owners also delete studies. Nobody needs a team model permission: the role decides that."""
    ours = Permission.objects.filter(content_type__app_label__in=STUDY_APPS).exclude(
        content_type__model="studymembership"
    )
    if role == Role.VIEWER:
        return ours.filter(codename__startswith="view_")
    if role == Role.RESEARCHER:
        return ours.exclude(Q(content_type__app_label="surveys") & Q(codename="delete_study"))
    return ours


def ensure_role_groups() -> None:
    """Create or correct the three groups (after every migrate, so new models' permissions join them), and
    put every team member in the groups of their roles. A group's permissions changed by hand are reset."""
    for role in Role.values:
        group, _ = Group.objects.get_or_create(name=group_name(role))
        group.permissions.set(permissions_of(role))
    members = StudyMembership.objects.values("user_id")
    for user in get_user_model().objects.filter(pk__in=members):
        sync_role_groups(user)


def sync_role_groups(user) -> None:
    """Put `user` in the group of each role they hold on some team, and in no other of these groups."""
    held = set(StudyMembership.objects.filter(user=user).values_list("role", flat=True))
    for role in held:
        group, created = Group.objects.get_or_create(name=group_name(role))
        if created:  # a database flushed since the last migrate (a test), or never migrated since they shipped
            group.permissions.set(permissions_of(role))
    ours = Group.objects.filter(name__in=[group_name(role) for role in Role.values])
    user.groups.remove(*ours.exclude(name__in=[group_name(role) for role in held]))
    user.groups.add(*ours.filter(name__in=[group_name(role) for role in held]))
