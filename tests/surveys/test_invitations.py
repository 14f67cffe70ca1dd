"""Expert invitations (issue 9, item 5): bound to the first browser, revocable, reissuable, expiring."""

from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from surveys.models import Answer, Invitation, Respondent
from surveys.services.respondent_survey import create_invitation
from tests.surveys.test_respondents import answer_post, answering_study, page

IN_USE = "This invitation is in use; ask the researcher for a new link."


def _invited(m=2):
    study = answering_study(m=m)
    invitation = create_invitation(study=study, system=study.systems.get(key="phil"), label="Prof. X")
    return study, invitation, reverse("surveys:answering-invitation", args=[study.slug, invitation.token])


def _consent(client, study):
    return client.post(reverse("surveys:answering-consent", args=[study.slug]), {"agree": "yes"})


@pytest.mark.django_db
def test_a_second_browser_is_refused_and_writes_nothing_while_the_first_keeps_working():
    study, _invitation, url = _invited()
    first, second = Client(), Client()
    assert first.get(url).status_code == 302
    _consent(first, study)
    response = second.get(url)
    assert response.status_code == 403
    assert IN_USE in response.content.decode()
    # The second browser has no way onto the pages either.
    assert second.post(page(study, 1), answer_post()).status_code == 403
    assert not Answer.objects.filter(origin=Answer.Origin.RESPONDENT).exists()
    assert first.get(url).url == page(study, 1)
    assert first.post(page(study, 1), answer_post()).url == page(study, 2)
    assert Respondent.objects.count() == 1
    assert Answer.objects.filter(origin=Answer.Origin.RESPONDENT).count() == 1


@pytest.mark.django_db
def test_a_forged_or_copied_unsigned_cookie_does_not_pass():
    _study, invitation, url = _invited()
    first = Client()
    first.get(url)
    invitation.refresh_from_db()
    thief = Client()
    thief.cookies[f"mj_invitation_{invitation.pk}"] = invitation.browser_key  # the key without its signature
    assert thief.get(url).status_code == 403


@pytest.mark.django_db
def test_a_revoked_invitation_stops_also_the_browser_that_opened_it(client):
    from surveys.services.invitations import revoke_invitation

    study, invitation, url = _invited()
    client.get(url)
    _consent(client, study)
    revoke_invitation(invitation=invitation)
    for response in (client.get(url), client.get(page(study, 1)), client.post(page(study, 1), answer_post())):
        assert response.status_code == 403
        assert "withdrawn; ask the researcher for a new link" in response.content.decode()
    assert not Answer.objects.filter(origin=Answer.Origin.RESPONDENT).exists()


@pytest.mark.django_db
def test_a_reissued_link_resumes_the_experts_pages_in_a_new_browser_and_the_old_one_stops(client, researcher):
    study, invitation, url = _invited()
    old_browser = Client()
    old_browser.get(url)
    _consent(old_browser, study)
    old_browser.post(page(study, 1), answer_post())
    response = client.post(
        reverse("admin:surveys_invitation_changelist"),
        {"action": "revoke_and_reissue", "_selected_action": [invitation.pk]},
        follow=True,
    )
    fresh = Invitation.objects.exclude(pk=invitation.pk).get()
    new_url = reverse("surveys:answering-invitation", args=[study.slug, fresh.token])
    assert new_url in response.content.decode()
    assert fresh.label == "Prof. X"
    assert fresh.created_by == researcher
    assert old_browser.get(page(study, 2)).status_code == 403
    assert old_browser.get(url).status_code == 403
    new_browser = Client()
    assert new_browser.get(new_url).url == page(study, 2)  # the same respondent, on their next page
    assert new_browser.post(page(study, 2), answer_post()).url.endswith("/done/")
    respondent = Respondent.objects.get()
    assert respondent.invitation == fresh
    assert respondent.status == Respondent.Status.COMPLETED


@pytest.mark.django_db
def test_an_invitation_expires_after_the_setting(settings):
    settings.INVITATION_MAX_AGE_DAYS = 14
    _study, invitation, url = _invited()
    Invitation.objects.filter(pk=invitation.pk).update(created_at=timezone.now() - timedelta(days=15))
    response = Client().get(url)
    assert response.status_code == 403
    assert "expired; ask the researcher for a new link" in response.content.decode()
    assert not Respondent.objects.exists()
    settings.INVITATION_MAX_AGE_DAYS = 0  # never
    assert Client().get(url).status_code == 302


@pytest.mark.django_db
def test_a_page_opened_before_the_invitation_expired_cannot_write_after(client, settings):
    settings.INVITATION_MAX_AGE_DAYS = 14
    study, invitation, url = _invited()
    client.get(url)
    _consent(client, study)
    assert client.get(page(study, 1)).status_code == 200  # the page is open in the expert's browser
    Invitation.objects.filter(pk=invitation.pk).update(created_at=timezone.now() - timedelta(days=15))

    response = client.post(page(study, 1), answer_post())

    assert response.status_code == 403
    assert "This invitation has expired; ask the researcher for a new link." in response.content.decode()
    assert not Answer.objects.filter(origin=Answer.Origin.RESPONDENT).exists()
    assert Respondent.objects.get().tasks.filter(submitted_at__isnull=False).count() == 0
    assert client.get(page(study, 1)).status_code == 403


@pytest.mark.django_db
def test_the_invitation_list_says_which_are_revoked_expired_or_in_use(client, researcher, settings):
    from surveys.services.invitations import revoke_invitation

    settings.INVITATION_MAX_AGE_DAYS = 30
    study, _invitation, url = _invited()
    Client().get(url)
    revoked = create_invitation(study=study, system=study.systems.get(key="phil"), label="Gone")
    revoke_invitation(invitation=revoked)
    old = create_invitation(study=study, system=study.systems.get(key="phil"), label="Old")
    Invitation.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=31))
    html = client.get(reverse("admin:surveys_invitation_changelist")).content.decode()
    assert "(bound to that browser)" in html
    assert "Revoked " in html
    assert "Expired " in html
