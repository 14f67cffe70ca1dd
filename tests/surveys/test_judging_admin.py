"""The researcher sees each judge's status, flags, first-position share and judgments in the admin."""

import pytest
from django.contrib.auth import get_user_model

from surveys.models import Participant
from tests.surveys.test_judging_flow import csrf_client, judge_all, live_study, post, through_demographics


@pytest.mark.django_db
def test_the_participant_page_shows_flags_share_and_every_judgment():
    study = live_study(minimum_seconds=1000)
    client = csrf_client()
    through_demographics(client, study)
    post(client, judge_all(client, study, alternate=False), {"choice": "2"})
    participant = Participant.objects.get()

    admin = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw")
    researcher = csrf_client()
    researcher.force_login(admin)
    page = researcher.get(f"/admin/surveys/participant/{participant.pk}/change/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "straight-lining" in html
    assert "too-fast" in html
    assert "under the study&#x27;s minimum of 1000 s" in html
    assert html.count("<tr><td>") == 10  # two pages x five questions
    assert "First (A)" in html
    listing = researcher.get("/admin/surveys/participant/").content.decode()
    assert "1.0" in listing
    assert "Completed" in listing
    minutes = f"{participant.seconds_total / 60:.1f}"
    assert f'<td class="field-minutes_judging">{minutes}</td>' in listing  # not 3.139088 seconds


@pytest.mark.django_db
def test_the_participant_admin_needs_a_staff_login():
    study = live_study()
    client = csrf_client()
    through_demographics(client, study)
    response = csrf_client().get(f"/admin/surveys/participant/{Participant.objects.get().pk}/change/")
    assert response.status_code == 302
    assert "/admin/login/" in response.url


@pytest.mark.django_db
def test_excluding_in_the_admin_reopens_the_judges_places_and_nothing_is_typed_in_by_hand(admin_client):
    study = live_study()
    client = csrf_client()
    through_demographics(client, study)
    post(client, judge_all(client, study), {"choice": "2"})
    participant = Participant.objects.get()
    assert participant.status == Participant.Status.COMPLETED
    assert not participant.exclusion
    filled = sum(study.cells.values_list("completed", flat=True))

    page = admin_client.get(f"/admin/surveys/participant/{participant.pk}/change/").content.decode()
    assert 'name="status"' not in page
    assert 'name="exclusion"' not in page
    response = admin_client.post(
        "/admin/surveys/participant/",
        {"action": "exclude_by_researcher", "_selected_action": [participant.pk]},
        follow=True,
    )
    assert "1 participants excluded by the researcher; 2 judging places reopened." in response.content.decode()
    participant.refresh_from_db()
    assert participant.exclusion == Participant.Exclusion.RESEARCHER
    assert sum(study.cells.values_list("completed", flat=True)) == filled - 2
