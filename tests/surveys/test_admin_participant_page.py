"""The participant page in the admin: the quality flags once, the demographics as rows a researcher reads."""

import re

import pytest
from django.contrib.auth import get_user_model

from surveys.models import Participant
from tests.surveys.test_judging_flow import csrf_client, judge_all, live_study, post, through_demographics


def _participant_page(participant: Participant) -> str:
    researcher = csrf_client()
    researcher.force_login(get_user_model().objects.create_superuser("boss", "boss@example.org", "pw"))
    response = researcher.get(f"/admin/surveys/participant/{participant.pk}/change/")
    assert response.status_code == 200
    return re.sub(r"\s+", " ", response.content.decode())


@pytest.mark.django_db
def test_the_participant_page_shows_one_list_of_flags_and_the_demographics_as_label_and_value():
    study = live_study(minimum_seconds=1000)
    client = csrf_client()
    through_demographics(client, study)
    post(client, judge_all(client, study, alternate=False), {"choice": "2"})
    participant = Participant.objects.get()
    participant.demographics["gender_specify"] = ""  # an answer left empty is no row
    participant.save()

    page = _participant_page(participant)
    labels = re.findall(r"<label>([^<]+)</label>", page)  # each read-only field's label
    assert "Quality flags:" in labels
    assert "Flags:" not in labels
    assert "Demographics:" in labels
    assert '<tr><th scope="row">Country of residence</th><td>United Kingdom</td></tr>' in page
    assert '<tr><th scope="row">Age</th><td>25-34</td></tr>' in page
    assert "Gender, in their words" not in page
    assert '{"' not in page  # no raw JSON of the demographics or flags
    assert "straight-lining" in page


@pytest.mark.django_db
def test_a_participant_who_has_not_reached_the_demographics_shows_none_given():
    study = live_study()
    client = csrf_client()
    client.get(f"/s/{study.slug}/?PROLIFIC_PID={'a' * 24}&STUDY_ID={'b' * 24}&SESSION_ID={'c' * 24}")
    page = _participant_page(Participant.objects.get())
    assert "Not given yet" in page
    assert "Quality flags:" in page
