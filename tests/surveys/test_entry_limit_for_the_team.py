"""The entry limit explains itself to a researcher testing their own links: the refusal page says why and how
"Try the survey" avoids it (only to the study's team), and the study page says it beside the link."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from surveys.models import Participant, StudyMembership
from surveys.services.lifecycle import go_live
from tests.conftest import make_study


def link(study, n: int) -> str:
    return f"/s/{study.slug}/?PROLIFIC_PID={n:024x}&STUDY_ID={'e' * 24}&SESSION_ID={n + 1000:024x}"


@pytest.fixture
def study(db, settings):
    settings.ENTRY_RATE_LIMIT = "3/10m"
    return go_live(study=make_study(completion_code="C0DE42"))


@pytest.fixture
def owner(study):
    user = get_user_model().objects.create_user("owner", password="pw-for-tests-1", is_staff=True)
    StudyMembership.objects.create(study=study, user=user, role=StudyMembership.Role.OWNER)
    return user


def test_the_teams_fourth_test_link_is_refused_with_the_reason_and_the_way_round(client, study, owner):
    client.force_login(owner)
    for n in range(3):
        assert client.get(link(study, n)).status_code == 302  # three made-up participants: let in
    refused = client.get(link(study, 3))
    page = refused.content.decode()
    assert refused.status_code == 429
    assert "You are signed in as a member of this study&#x27;s team" in page
    assert "(3 new participants per 10 minutes from one internet address, ENTRY_RATE_LIMIT)" in page
    assert "your test link number 4 was refused" in page
    assert "use &quot;Try the survey&quot; on the study&#x27;s page" in page
    assert reverse("admin:surveys_study_change", args=[study.pk]) in page

    # Opened without its Prolific ids, as "Try the survey" does, the link is a try: never counted or refused.
    assert client.get(f"/s/{study.slug}/?restart=1").status_code == 302
    assert Participant.objects.filter(is_preview=True).count() == 1


def test_a_participant_refused_by_the_limit_sees_no_word_meant_for_the_team(study):
    participant = Client()
    for n in range(3):
        participant.get(link(study, n))
    page = participant.get(link(study, 3)).content.decode()
    assert "please wait 10 minutes" in page
    assert "team" not in page
    assert "/admin/" not in page


def test_the_study_page_says_the_link_is_limited_and_the_try_is_not(client, study, owner):
    owner.is_superuser = True
    owner.save()
    client.force_login(owner)
    page = client.get(reverse("admin:surveys_study_change", args=[study.pk])).content.decode()
    assert "the entry limit allows 3 per 10 minutes from one internet address" in page
    assert (
        "&quot;Try the survey&quot; below is never counted." in page
        or '"Try the survey" below is never counted.' in page
    )
