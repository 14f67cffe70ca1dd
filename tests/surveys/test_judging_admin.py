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
    assert "straight-lining" in html and "too-fast" in html
    assert "under the study&#x27;s minimum of 1000 s" in html
    assert html.count("<tr><td>") == 10  # two pages x five questions
    assert "First (A)" in html
    listing = researcher.get("/admin/surveys/participant/").content.decode()
    assert "1.0" in listing and "Completed" in listing
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
