"""Who may take the study on Prolific: set in the study's admin page, sent as the draft's `filters` (names looked up
in Prolific's filter list), checked by the fake Prolific as Prolific checks them."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.urls import reverse

from surveys.models import Study, StudyMembership
from surveys.prolific import drafts
from surveys.prolific.eligibility import clean_eligibility, prolific_filters
from surveys.services.teams import set_member
from tests.conftest import make_study

from .test_admin import _FormFields

URL = "http://testserver/s/s1/"
Role = StudyMembership.Role


@pytest.fixture
def study(db):
    return make_study(description="Compare two answers.", vignettes_per_participant=3, completion_code="DONE1")


def test_it_refuses_what_prolific_could_not_take():
    with pytest.raises(ValidationError, match="0 to 100"):
        clean_eligibility({"minimum_approval_rate": 101})
    with pytest.raises(ValidationError, match="Unknown eligibility keys: age"):
        clean_eligibility({"age": 30})
    with pytest.raises(ValidationError, match="Not Prolific study ids"):
        clean_eligibility({"excluded_studies": ["not-an-id"]})
    assert clean_eligibility({"countries": " United Kingdom, Ireland,,United Kingdom"}) == {
        "countries": ["United Kingdom", "Ireland"]
    }


def test_the_draft_sends_prolifics_choice_ids_for_the_names_and_prolific_accepts_them(study, prolific):
    study.prolific_eligibility = {
        "minimum_approval_rate": 95,
        "countries": ["united kingdom", "Ireland"],
        "fluent_languages": ["English"],
    }
    study.save()

    sent = drafts.send_draft(study=study, study_url=URL)

    assert sent.created
    created = prolific.calls_to("/studies/")[0].body
    assert created["filters"] == [
        {"filter_id": "approval_rate", "selected_range": {"lower": 95, "upper": 100}},
        {"filter_id": "current-country-of-residence", "selected_values": ["0", "2"]},
        {"filter_id": "fluent-languages", "selected_values": ["19"]},
    ]
    assert prolific.studies[sent.prolific_id]["filters"] == created["filters"]
    assert sent.draft.eligibility == [
        "approval rate at least 95%",
        "living in united kingdom, Ireland",
        "fluent in English",
    ]


def test_a_name_prolific_does_not_list_stops_the_draft_and_says_which_names_it_has(study, prolific):
    study.prolific_eligibility = {"countries": ["Englnd"]}
    study.save()

    with pytest.raises(ValidationError, match=r"not in Prolific.s list for .living in.: Englnd .*United Kingdom"):
        drafts.send_draft(study=study, study_url=URL)

    assert prolific.calls_to("/studies/") == []


def test_a_second_experiment_keeps_out_the_judges_of_the_teams_earlier_studies(study, prolific):
    lead = get_user_model().objects.create_user("lead", is_staff=True)
    set_member(study=study, user=lead, role=Role.OWNER)
    first = drafts.send_draft(study=study, study_url=URL).prolific_id
    elsewhere = make_study(slug="other-team", completion_code="DONE2")
    drafts.send_draft(study=elsewhere, study_url="http://testserver/s/other-team/")
    second = make_study(slug="s2", completion_code="DONE3", prolific_eligibility={"exclude_team_studies": True})
    set_member(study=second, user=lead, role=Role.RESEARCHER)

    sent = drafts.send_draft(study=second, study_url="http://testserver/s/s2/")

    assert prolific.calls_to("/studies/")[-1].body["filters"] == [
        {"filter_id": "previous_studies_blocklist", "selected_values": [first]}
    ]
    assert sent.draft.eligibility == [f"not in 1 earlier study ({first})"]


def test_no_eligibility_sends_an_empty_filter_list_and_says_anyone_may_take_part(study, prolific):
    sent = drafts.send_draft(study=study, study_url=URL)

    assert prolific.calls_to("/studies/")[0].body["filters"] == []
    assert sent.draft.eligibility == ["anyone on Prolific (no filters)"]
    assert prolific.calls_to("/filters/", method="GET") == []  # no names to look up: no call


def test_the_fake_refuses_filters_prolific_would_refuse(study, prolific):
    study.prolific_eligibility = {"excluded_studies": ["a" * 24]}  # not a study of this workspace
    study.save()
    payload = drafts.build_draft(study=study, study_url=URL).payload

    from surveys.prolific import client

    with pytest.raises(client.Permanent, match="previous_studies_blocklist"):
        client.create_study(payload)
    with pytest.raises(client.Permanent, match="range filter"):
        client.create_study({**payload, "filters": [{"filter_id": "approval_rate", "selected_values": ["95"]}]})


def test_the_study_page_sets_eligibility_and_the_confirmation_page_lists_it(client, researcher, study, prolific):
    url = reverse("admin:surveys_study_change", args=[study.pk])
    fields = _FormFields()
    fields.feed(client.get(url).content.decode())
    data = {name: value for name, value in fields.data.items() if name != "csrfmiddlewaretoken"}
    data.update(
        eligibility_minimum_approval_rate="98",
        eligibility_countries="United States",
        eligibility_exclude_team_studies="on",
    )

    response = client.post(url, data)

    assert response.status_code == 302, response.content.decode()[:2000]
    study.refresh_from_db()
    assert study.prolific_eligibility == {
        "minimum_approval_rate": 98,
        "countries": ["United States"],
        "exclude_team_studies": True,
    }
    page = client.post(
        reverse("admin:surveys_study_changelist"),
        {"action": "create_or_update_prolific_draft", "_selected_action": [study.pk]},
    ).content.decode()
    assert "approval rate at least 98%; living in United States" in page
    assert "Nothing is spent by a draft" in page


def test_a_bad_approval_rate_is_refused_on_the_study_page(client, researcher, study):
    url = reverse("admin:surveys_study_change", args=[study.pk])
    fields = _FormFields()
    fields.feed(client.get(url).content.decode())
    data = {name: value for name, value in fields.data.items() if name != "csrfmiddlewaretoken"}
    data.update(eligibility_excluded_studies="123")

    response = client.post(url, data)

    assert response.status_code == 200
    assert "Not Prolific study ids" in response.content.decode()
    assert Study.objects.get(pk=study.pk).prolific_eligibility == {}


def test_filters_in_words_for_a_list_without_the_filter(study):
    study.prolific_eligibility = {"fluent_languages": ["English"]}
    assert prolific_filters(study, []).problems == [
        "Prolific's filter list has no 'fluent-languages' filter to say who is fluent in"
    ]
