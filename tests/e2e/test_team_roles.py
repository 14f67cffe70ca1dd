"""A study's team in Chromium, as each role: the owner invites a colleague from the study's page, the
colleague chooses a password through the link and looks around as a viewer without an error; the owner
makes them a researcher, then removes them, and cannot remove themselves (issue 34, item 2).

Nobody here holds a hand-ticked model permission: the roles' shipped groups give them.
"""

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from surveys.models import AuditEvent, StudyMembership
from surveys.services.teams import set_member

from ..conftest import make_judged_study

Role = StudyMembership.Role
PASSWORD = "pw-for-the-lead-1"


@pytest.fixture
def live_study(live_server, db, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"  # no mail: the owner is shown the link
    study = make_judged_study(slug="pilot", participants=6)  # live: its page is read-only ("frozen") for everyone
    lead = get_user_model().objects.create_user("lead", password=PASSWORD, is_staff=True)
    set_member(study=study, user=lead, role=Role.OWNER)
    return study


def sign_in(page, live_server, username: str, password: str, then: str) -> None:
    page.goto(f"{live_server.url}/admin/login/?next={then}")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}{then}")


def study_page(study) -> str:
    return f"/admin/surveys/study/{study.pk}/change/"


def no_error_or_warning(page) -> None:
    expect(page.locator(".errornote, .errorlist, .messagelist .error, .messagelist .warning")).to_have_count(0)
    assert "frozen" not in page.locator("#content").inner_text().lower()
    assert "permission" not in page.locator("#content").inner_text().lower()


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_an_invited_viewer_sets_a_password_and_reads_everything_without_an_error(
    live_server, live_study, chromium_browser
):
    owner = chromium_browser.new_context()
    page = owner.new_page()
    sign_in(page, live_server, "lead", PASSWORD, study_page(live_study))
    page.click("a.mj-invite")
    page.fill("#id_who", "kim@uni.example.org")
    page.select_option("#id_role", "viewer")
    page.click("button.mj-invite-submit")
    expect(page.locator(".messagelist")).to_contain_text("On the team as viewer: kim@uni.example.org")
    link = page.locator("input.mj-invitation-link").input_value()
    owner.close()

    colleague = chromium_browser.new_context()
    page = colleague.new_page()
    page.goto(link)
    expect(page.locator("#content")).to_contain_text("Your username is kim@uni.example.org")
    page.fill("#id_new_password1", "kims own pass phrase 9")
    page.fill("#id_new_password2", "kims own pass phrase 9")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/admin/surveys/study/")
    expect(page.locator(".messagelist")).to_contain_text("your password is set and you are signed in")
    page.click("text=Study pilot")
    page.wait_for_url(f"{live_server.url}{study_page(live_study)}")
    no_error_or_warning(page)
    expect(page.locator(".mj-team")).to_contain_text("kim@uni.example.org (viewer)")
    expect(page.locator("a.mj-invite")).to_have_count(0)
    expect(page.locator("input[name=_save]")).to_have_count(0)

    page.click("text=All answers, side by side per vignette")
    expect(page.locator("#content h1")).to_be_visible()
    no_error_or_warning(page)
    page.goto(f"{live_server.url}/dashboard/pilot/")
    expect(page.locator("h1")).to_contain_text("Study pilot")
    assert page.locator("text=Refit now").count() == 0
    assert page.request.get(f"{live_server.url}/dashboard/pilot/exports/judgments.csv").status == 200
    page.goto(f"{live_server.url}/admin/surveys/auditevent/")
    no_error_or_warning(page)
    expect(page.locator("#result_list")).to_contain_text("Team changed")
    page.goto(f"{live_server.url}/admin/")
    no_error_or_warning(page)
    colleague.close()


def _team_row(page, username: str):
    """The study page's "Team" row of `username` (the user shown as text: nobody is picked from a list)."""
    name = page.locator("td.field-user p", has_text=re.compile(rf"^{re.escape(username)}$"))
    return page.locator("#memberships-group tr.form-row").filter(has=name)


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_the_owner_changes_and_removes_roles_and_cannot_remove_themselves(live_server, live_study, chromium_browser):
    rae = get_user_model().objects.create_user("rae", password="pw-for-rae-12", is_staff=True)
    set_member(study=live_study, user=rae, role=Role.VIEWER)
    context = chromium_browser.new_context()
    page = context.new_page()
    sign_in(page, live_server, "rae", "pw-for-rae-12", study_page(live_study))
    expect(page.locator("input[name=_save]")).to_have_count(0)  # a viewer cannot save

    owner = chromium_browser.new_context().new_page()
    sign_in(owner, live_server, "lead", PASSWORD, study_page(live_study))
    _team_row(owner, "rae").locator("td.field-role select").select_option("researcher")
    owner.click("input[name=_continue]")
    expect(owner.locator(".messagelist")).to_contain_text("changed successfully")
    assert StudyMembership.objects.get(user=rae).role == Role.RESEARCHER

    page.reload()  # the same colleague, now a researcher: told why the live study's fields are read-only
    expect(page.locator(".errornote, .errorlist, .messagelist .error")).to_have_count(0)
    expect(page.locator(".messagelist .warning")).to_contain_text("live")
    expect(page.locator(".mj-team")).to_contain_text("rae (researcher)")
    page.goto(f"{live_server.url}/admin/surveys/study/")
    expect(page.locator("select[name=action]")).to_have_count(1)

    row = _team_row(owner, "rae")
    row.locator("td.delete input[type=checkbox]").check()
    owner.click("input[name=_continue]")
    expect(owner.locator(".messagelist")).to_contain_text("changed successfully")
    assert not StudyMembership.objects.filter(user=rae).exists()
    assert not rae.groups.exists()
    page.goto(f"{live_server.url}{study_page(live_study)}")
    expect(page.locator("body")).not_to_contain_text("Study pilot")  # the study is no longer theirs (403)

    row = _team_row(owner, "lead")
    row.locator("td.delete input[type=checkbox]").check()
    owner.click("input[name=_continue]")
    expect(owner.locator("#memberships-group")).to_contain_text("needs at least one owner")
    assert StudyMembership.objects.get(user__username="lead").role == Role.OWNER
    changes = AuditEvent.objects.filter(action=AuditEvent.Action.TEAM_CHANGED, details__member="rae")
    assert [(e.details["role"], e.details["was"]) for e in changes.order_by("at", "id")] == [
        ("viewer", None),
        ("researcher", "viewer"),
        (None, "researcher"),
    ]
    context.close()
