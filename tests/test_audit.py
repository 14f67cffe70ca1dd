"""The audit trail (issue 21, item 4): who went live, closed, exported participant data or changed a team;
read-only in the admin, each team seeing its own studies' events. Paid runs: tests/llm_judging/test_audit_of_runs.py."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from surveys.models import AuditEvent, Study, StudyMembership
from surveys.services.study_files import export_study

from .conftest import make_judged_study, make_study
from .surveys.test_admin import _FormFields

Role = StudyMembership.Role
Action = AuditEvent.Action


def member(username: str, study: Study, role: str, **extra):
    user = get_user_model().objects.create_user(username, password="pw-for-tests-1", is_staff=True, **extra)
    StudyMembership.objects.create(study=study, user=user, role=role)
    return user


@pytest.mark.django_db
def test_going_live_and_closing_in_the_admin_say_who_and_when(client):
    study = make_study(slug="s1")
    client.force_login(member("ada", study, Role.RESEARCHER, is_superuser=False))
    ada = get_user_model().objects.get(username="ada")
    ada.user_permissions.add(*_permissions("change_study", "view_study"))
    changelist = reverse("admin:surveys_study_changelist")
    for action in ("make_live", "make_closed"):
        client.post(changelist, {"action": action, "_selected_action": [study.pk]})
    events = list(AuditEvent.objects.order_by("at", "id").values_list("action", "username", "study_slug"))
    assert events == [(Action.WENT_LIVE, "ada", "s1"), (Action.CLOSED, "ada", "s1")]
    assert AuditEvent.objects.get(action=Action.WENT_LIVE).details == {"cells": 9}


@pytest.mark.django_db
def test_exporting_participant_data_is_recorded_and_fitted_numbers_are_not(client):
    study = make_judged_study(slug="s1", participants=6)
    client.force_login(member("viewer", study, Role.VIEWER))
    for name in ("judgments.csv", "demographics.csv", "bradleyterry2.csv"):
        response = client.get(f"/dashboard/s1/exports/{name}")
        assert response.status_code == 200
    exported = AuditEvent.objects.filter(action=Action.DATA_EXPORTED)
    assert sorted(e.details["file"] for e in exported) == ["bradleyterry2.csv", "demographics.csv", "judgments.csv"]
    assert {e.username for e in exported} == {"viewer"}
    assert client.get("/dashboard/s1/exports/results.csv").status_code == 404  # no run yet: nothing handed out
    assert exported.count() == 3


@pytest.mark.django_db
def test_an_owner_changes_the_team_on_the_study_page_and_a_researcher_cannot(client):
    study = make_study(slug="s1")
    owner = member("owner", study, Role.OWNER)
    researcher = member("res", study, Role.RESEARCHER)
    colleague = member("new", study, Role.VIEWER)
    everything = _permissions("change_study", "view_study", "add_studymembership", "change_studymembership")
    for user in (owner, researcher):
        user.user_permissions.add(*everything)
    url = reverse("admin:surveys_study_change", args=[study.pk])

    client.force_login(researcher)
    data = _page_form(client, url)
    assert _read_only(client, url)  # the team is shown, not editable
    client.post(url, {**data, **_role_of_row(data, colleague, Role.OWNER)})
    assert StudyMembership.objects.get(user=colleague).role == Role.VIEWER

    client.force_login(owner)
    data = _page_form(client, url)
    response = client.post(url, {**data, **_role_of_row(data, colleague, Role.RESEARCHER)})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert StudyMembership.objects.get(user=colleague).role == Role.RESEARCHER
    event = AuditEvent.objects.get(action=Action.TEAM_CHANGED)
    assert (event.username, event.details) == ("owner", {"member": "new", "role": "researcher", "was": "viewer"})


@pytest.mark.django_db
def test_nobody_is_added_to_a_team_by_picking_from_every_staff_account(client):
    study = make_study(slug="s1")
    owner = member("owner", study, Role.OWNER, is_superuser=True)
    outsider = get_user_model().objects.create_user("someone-elses", password="pw-for-tests-1", is_staff=True)
    client.force_login(owner)
    url = reverse("admin:surveys_study_change", args=[study.pk])
    assert "someone-elses" not in client.get(url).content.decode()  # no list of staff accounts on the page
    data = _page_form(client, url)
    client.post(url, {**data, **_new_member(data, outsider, Role.VIEWER)})
    assert not StudyMembership.objects.filter(user=outsider).exists()  # joining is by invitation only


@pytest.mark.django_db
def test_the_last_owner_cannot_leave_the_team(client):
    study = make_study(slug="s1")
    owner = member("owner", study, Role.OWNER, is_superuser=True)
    client.force_login(owner)
    url = reverse("admin:surveys_study_change", args=[study.pk])
    data = _page_form(client, url)
    data["memberships-0-role"] = Role.VIEWER
    response = client.post(url, data)
    assert "needs at least one owner" in response.content.decode()
    assert StudyMembership.objects.get(user=owner).role == Role.OWNER
    assert not AuditEvent.objects.exists()


@pytest.mark.django_db
def test_the_audit_admin_is_read_only_filterable_and_shows_each_team_its_own_studies(client):
    ours, theirs = make_study(slug="ours"), make_study(slug="theirs")
    viewer = member("viewer", ours, Role.VIEWER)
    viewer.user_permissions.add(*_permissions("view_auditevent"))
    for study in (ours, theirs):
        AuditEvent.objects.create(action=Action.CLOSED, study=study, study_slug=study.slug, username="someone")
    client.force_login(viewer)
    changelist = reverse("admin:surveys_auditevent_changelist")
    page = client.get(changelist).content.decode()
    assert "ours" in page
    assert "theirs" not in page
    assert "?action__exact=" in page  # filterable by action (and by study: the studies of this user's events)
    event = AuditEvent.objects.get(study=ours)
    change = reverse("admin:surveys_auditevent_change", args=[event.pk])
    assert client.post(change, {"action": "went_live", "username": "me"}).status_code == 403
    assert client.get(reverse("admin:surveys_auditevent_add")).status_code == 403
    assert client.post(reverse("admin:surveys_auditevent_delete", args=[event.pk]), {"post": "yes"}).status_code == 403
    assert AuditEvent.objects.get(pk=event.pk).action == Action.CLOSED


@pytest.mark.django_db
def test_import_study_with_an_owner_makes_them_owner_and_an_unknown_owner_imports_nothing(tmp_path):
    import json

    data = export_study(make_study(slug="filed"))
    data["slug"] = "imported"
    path = tmp_path / "imported.study.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CommandError, match="no staff user of that name"):
        call_command("import_study", str(path), "--owner", "nobody")
    assert not Study.objects.filter(slug="imported").exists()
    get_user_model().objects.create_user("lead", password="pw-for-tests-1", is_staff=True)
    call_command("import_study", str(path), "--owner", "lead")
    membership = StudyMembership.objects.get(study__slug="imported")
    assert (membership.user.username, membership.role) == ("lead", Role.OWNER)


def _permissions(*codenames):
    from django.contrib.auth.models import Permission

    return Permission.objects.filter(codename__in=codenames)


def _page_form(client, url: str) -> dict:
    fields = _FormFields()
    fields.feed(client.get(url).content.decode())
    return {name: value for name, value in fields.data.items() if name != "csrfmiddlewaretoken"}


def _read_only(client, url: str) -> bool:
    return 'name="memberships-0-role"' not in client.get(url).content.decode()


def _role_of_row(data: dict, user, role: str) -> dict:
    row = next(key for key, value in data.items() if key.endswith("-id") and key.startswith("memberships-") and
               StudyMembership.objects.filter(pk=value, user=user).exists())  # fmt: skip
    return {row.removesuffix("-id") + "-role": role}


def _new_member(data: dict, user, role: str) -> dict:
    index = int(data.get("memberships-TOTAL_FORMS") or 0)
    return {
        f"memberships-{index}-user": str(user.pk),
        f"memberships-{index}-role": role,
        "memberships-TOTAL_FORMS": str(index + 1),
        "memberships-INITIAL_FORMS": data.get("memberships-INITIAL_FORMS", "0"),
    }
