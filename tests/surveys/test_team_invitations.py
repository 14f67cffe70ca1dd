"""Inviting a colleague onto a study's team, and the roles' shipped permission groups (issue 34, item 2).

Each user here gets their model permissions from the role groups only: nobody ticks a permission by hand.
"""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core import mail
from django.urls import reverse

from surveys.models import AuditEvent, StudyMembership
from surveys.services.role_groups import group_name
from surveys.services.teams import set_member

from ..conftest import make_judged_study, make_study

Role = StudyMembership.Role
User = get_user_model()
LINK = re.compile(r"https?://[^\s\"<]+/team/join/[^\s\"<]+")


def person(username: str, **extra):
    return User.objects.create_user(username, password="pw-for-tests-1", is_staff=True, **extra)


def on_team(username: str, study, role: str):
    user = person(username)
    set_member(study=study, user=user, role=role)
    return user


def invite(client, study, who: str, role: str = Role.VIEWER):
    return client.post(reverse("admin:surveys_study_invite", args=[study.pk]), {"who": who, "role": role})


@pytest.fixture
def no_mail(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"


@pytest.mark.django_db
def test_the_roles_ship_as_permission_groups():
    groups = {role: Group.objects.get(name=group_name(role)) for role in Role.values}
    codenames = {role: set(group.permissions.values_list("codename", flat=True)) for role, group in groups.items()}
    assert {"view_study", "view_answer", "view_auditevent", "view_judgingrun", "view_analysisrun"} <= codenames[
        "viewer"
    ]
    assert all(name.startswith("view_") for name in codenames["viewer"])
    assert {"change_study", "add_collectionrun", "add_judgingrun"} <= codenames["researcher"]
    assert "delete_study" not in codenames["researcher"]
    assert "delete_study" in codenames["owner"]
    assert not any("studymembership" in name for names in codenames.values() for name in names)


@pytest.mark.django_db
def test_a_members_groups_follow_their_roles():
    first, second = make_study(slug="first"), make_study(slug="second")
    user = on_team("ann", first, Role.VIEWER)
    assert set(user.groups.values_list("name", flat=True)) == {"MoralJudge viewer"}
    set_member(study=second, user=user, role=Role.RESEARCHER)
    assert set(user.groups.values_list("name", flat=True)) == {"MoralJudge viewer", "MoralJudge researcher"}
    from surveys.services.teams import remove_member

    remove_member(study=first, user=user)
    remove_member(study=second, user=user)
    assert not user.groups.exists()


@pytest.mark.django_db
def test_an_owner_invites_a_new_colleague_by_e_mail_who_chooses_a_password_through_the_link(client):
    study = make_study(slug="s1")
    client.force_login(on_team("lead", study, Role.OWNER))
    page = invite(client, study, "Kim.Colleague@Uni.example.org").content.decode()
    kim = User.objects.get(username="Kim.Colleague@Uni.example.org")
    assert kim.is_staff
    assert not kim.has_usable_password()
    assert StudyMembership.objects.get(study=study, user=kim).role == Role.VIEWER
    assert list(kim.groups.values_list("name", flat=True)) == ["MoralJudge viewer"]
    assert kim.email == "Kim.Colleague@uni.example.org"  # the domain normalised, as Django does
    assert "An e-mail with the link went to Kim.Colleague@uni.example.org" in page
    assert not LINK.search(page)  # mailed, so not shown: the owner never holds the colleague's password link
    (message,) = mail.outbox
    assert message.to == ["Kim.Colleague@uni.example.org"]
    assert "Study s1" in message.subject
    event = AuditEvent.objects.get(action=AuditEvent.Action.TEAM_CHANGED, details__member=kim.username)
    assert event.username == "lead"
    assert event.details["role"] == "viewer"
    assert event.details["new_account"] is True

    link = LINK.search(message.body).group(0)
    colleague = client.__class__()
    form = colleague.get(link, follow=True)
    assert "Kim.Colleague@Uni.example.org" in form.content.decode()
    chosen = {"new_password1": "a long pass phrase 7", "new_password2": "a long pass phrase 7"}
    done = colleague.post(form.redirect_chain[-1][0], chosen, follow=True)
    assert done.redirect_chain[-1][0] == reverse("admin:surveys_study_changelist")
    assert "Study s1" in done.content.decode()  # signed in, and the study is listed
    assert User.objects.get(pk=kim.pk).check_password("a long pass phrase 7")
    again = client.__class__().get(link, follow=True).content.decode()
    assert "no longer works" in again


@pytest.mark.django_db
def test_without_mail_the_owner_is_shown_the_link(client, no_mail):
    study = make_study(slug="s1")
    client.force_login(on_team("lead", study, Role.OWNER))
    page = invite(client, study, "sam", Role.RESEARCHER).content.decode()
    assert "mail is not configured" in page
    assert LINK.search(page)
    assert StudyMembership.objects.get(user__username="sam").role == Role.RESEARCHER
    assert not mail.outbox


@pytest.mark.django_db
def test_a_colleague_with_a_password_is_found_and_gets_a_sign_in_link_only(client, no_mail):
    study = make_study(slug="s1")
    existing = person("robin", email="robin@uni.example.org")
    client.force_login(on_team("lead", study, Role.OWNER))
    page = invite(client, study, "ROBIN@uni.example.org").content.decode()
    assert StudyMembership.objects.get(user=existing).role == Role.VIEWER
    assert User.objects.count() == 2  # found by e-mail, not created
    assert not LINK.search(page)  # never a password link for an account that has a password
    assert reverse("admin:surveys_study_change", args=[study.pk]) in page


@pytest.mark.django_db
def test_an_unclaimed_account_on_another_teams_study_gets_no_link_from_this_owner(client, no_mail):
    ours, theirs = make_study(slug="ours"), make_study(slug="theirs")
    other_owner = on_team("other", theirs, Role.OWNER)
    client.force_login(other_owner)
    assert LINK.search(invite(client, theirs, "newbie").content.decode())
    client.force_login(on_team("lead", ours, Role.OWNER))
    page = invite(client, ours, "newbie").content.decode()
    assert StudyMembership.objects.filter(user__username="newbie").count() == 2
    assert not LINK.search(page)
    assert "whoever invited them first" in page


@pytest.mark.django_db
def test_only_owners_invite_and_another_teams_study_does_not_exist(client):
    study, theirs = make_study(slug="s1"), make_study(slug="theirs")
    for role in (Role.RESEARCHER, Role.VIEWER):
        client.force_login(on_team(role, study, role))
        assert client.get(reverse("admin:surveys_study_invite", args=[study.pk])).status_code == 403
        assert invite(client, study, "someone").status_code == 403
        page = client.get(reverse("admin:surveys_study_change", args=[study.pk])).content.decode()
        assert reverse("admin:surveys_study_invite", args=[study.pk]) not in page
    client.force_login(on_team("lead", study, Role.OWNER))
    assert client.get(reverse("admin:surveys_study_invite", args=[theirs.pk])).status_code == 404
    page = client.get(reverse("admin:surveys_study_change", args=[study.pk])).content.decode()
    assert reverse("admin:surveys_study_invite", args=[study.pk]) in page
    assert not User.objects.filter(username="someone").exists()


@pytest.mark.django_db
def test_the_last_owner_cannot_invite_themselves_down_to_viewer(client):
    study = make_study(slug="s1")
    client.force_login(on_team("lead", study, Role.OWNER))
    page = invite(client, study, "lead", Role.VIEWER).content.decode()
    assert "needs an owner" in page
    assert StudyMembership.objects.get(user__username="lead").role == Role.OWNER


@pytest.mark.django_db
def test_a_viewer_with_only_the_group_sees_the_study_its_answers_dashboard_exports_and_audit_trail(client):
    study = make_judged_study(slug="live", participants=6)
    client.force_login(on_team("vic", study, Role.VIEWER))
    assert "permission to view or edit anything" not in client.get(reverse("admin:index")).content.decode()
    page = client.get(reverse("admin:surveys_study_change", args=[study.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "frozen" not in text.lower()  # no warning about a state a viewer cannot change anyway
    assert 'class="errornote"' not in text
    assert 'class="error"' not in text
    assert 'name="_save"' not in text
    assert client.get(reverse("admin:surveys_study_answers", args=[study.pk])).status_code == 200
    assert client.get(reverse("analysis:study", args=[study.slug])).status_code == 200
    export = client.get(reverse("analysis:export", args=[study.slug, "judgments.csv"]))
    assert export.status_code == 200
    assert client.get(reverse("admin:surveys_auditevent_changelist")).status_code == 200
    assert client.get(reverse("admin:surveys_answer_changelist")).status_code == 200
