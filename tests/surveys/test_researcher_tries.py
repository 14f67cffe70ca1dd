"""Issue 23.1: the study's links ready to copy, and the researcher's own tries of the survey."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from analysis.exports import EXPORTS
from surveys.models import Cell, Judgment, Participant
from tests.surveys.test_judging_flow import DEMOGRAPHICS, live_study, picks, post, through_demographics

pytestmark = pytest.mark.django_db

PLACEHOLDERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&amp;STUDY_ID={{%STUDY_ID%}}&amp;SESSION_ID={{%SESSION_ID%}}"


def researcher_client(address="127.0.0.1"):
    user = get_user_model().objects.create_superuser("res", password="pw")
    client = Client(enforce_csrf_checks=True, REMOTE_ADDR=address)
    client.force_login(user)
    return client


def try_the_survey(client, study):
    """Follow the "Try the survey" button to the end, as a researcher would."""
    response = client.get(f"/s/{study.slug}/?restart=1")
    assert response.status_code == 302, response.content
    response = post(client, response.url, {"consent": "yes", "anonymised": "yes"})
    response = post(client, response.url, DEMOGRAPHICS)
    while "/pair/" in response.url:
        response = post(client, response.url, picks(study))
    return post(client, response.url, {"choice": "2"})


def test_the_admin_page_and_dashboard_show_both_links_and_the_try_button():
    study = live_study()
    client = researcher_client()
    for url in (f"/admin/surveys/study/{study.pk}/change/", f"/dashboard/{study.slug}/"):
        page = client.get(url).content.decode()
        assert f"http://testserver/s/{study.slug}/?{PLACEHOLDERS}" in page, url
        assert f"http://testserver/r/{study.slug}/?{PLACEHOLDERS}" in page, url
        assert f'href="http://testserver/s/{study.slug}/?restart=1"' in page, url
        assert "Try the survey" in page


def test_a_draft_says_when_a_try_becomes_possible():
    from tests.conftest import make_study

    study = make_study()
    client = researcher_client()
    page = client.get(f"/admin/surveys/study/{study.pk}/change/").content.decode()
    assert "opens once the study is live" in page
    assert "?restart=1" not in page


def test_tries_are_not_charged_to_the_entry_limit_and_never_count(settings):
    settings.ENTRY_RATE_LIMIT = "1/10m"
    study = live_study()
    client = researcher_client()
    for _ in range(4):  # beyond the limit of one entry per address
        assert "/done/" in try_the_survey(client, study).url
    assert Participant.objects.filter(is_preview=True).count() == 4
    assert all(cell.completed == 0 and cell.reserved == 0 for cell in Cell.objects.filter(study=study))
    assert Judgment.objects.exists()
    assert not Judgment.objects.valid().exists()
    # A real judge from the same address is still let in: the tries were not charged to it.
    assert through_demographics(Client(REMOTE_ADDR="127.0.0.1"), study).status_code == 302
    judgments_csv = b"".join(client.get(f"/dashboard/{study.slug}/exports/judgments.csv").streaming_content)
    assert "judgments.csv" in EXPORTS
    assert judgments_csv.count(b"\n") == 1


def test_the_participant_list_marks_tries_and_shows_first_position_as_a_percentage():
    study = live_study()
    client = researcher_client()
    try_the_survey(client, study)
    Participant.objects.update(first_position_share=0.4666666666666667)
    page = client.get("/admin/surveys/participant/").content.decode()
    assert "(test)" in page
    assert "47%" in page
    assert "0.4666" not in page


def test_one_action_removes_the_tries_and_keeps_the_real_judges():
    study = live_study()
    client = researcher_client()
    through_demographics(Client(), study)
    try_the_survey(client, study)
    try_the_survey(client, study)
    changelist = "/admin/surveys/study/"
    page = client.get(changelist)
    response = client.post(
        changelist,
        {
            "action": "remove_test_participants",
            "_selected_action": [study.pk],
            "csrfmiddlewaretoken": page.context["csrf_token"],
        },
        follow=True,
    )
    assert "2 test participants removed" in response.content.decode()
    assert list(Participant.objects.values_list("is_preview", flat=True)) == [False]
    assert sum(cell.reserved for cell in Cell.objects.filter(study=study)) == 2  # the real judge's pages


def test_staff_outside_the_study_team_cannot_try_it_and_no_participant_is_made():
    study = live_study()
    outsider = get_user_model().objects.create_user("outsider", password="pw", is_staff=True)
    client = Client(REMOTE_ADDR="127.0.0.1")
    client.force_login(outsider)
    response = client.get(f"/s/{study.slug}/?restart=1")
    assert response.status_code == 400  # treated as a visitor without Prolific's parameters
    assert not Participant.objects.filter(study=study).exists()
