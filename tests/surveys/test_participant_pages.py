"""What participants see when something goes wrong, and the accessibility basics of the survey forms."""

import re

import pytest
from django.test import Client
from django.views.defaults import server_error

from surveys.models import Cell, Participant
from surveys.services.lifecycle import go_live
from tests.conftest import make_study

PID = "5f0c8a1b2c3d4e5f6a7b8c9d"
STUDY_ID = "60aa11bb22cc33dd44ee55ff"
SESSION = "70aa11bb22cc33dd44ee55ff"


def live_study(**kwargs):
    kwargs.setdefault("vignettes_per_participant", 2)
    kwargs.setdefault("minimum_seconds", 0)
    return go_live(study=make_study(**kwargs))


def link(study):
    return f"/s/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION}"


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


@pytest.mark.django_db
def test_a_form_sent_after_the_cookies_were_cleared_says_how_to_carry_on():
    study = live_study()
    browser = Client(enforce_csrf_checks=True)
    browser.get(link(study), follow=True)
    browser.cookies.clear()  # the participant cleared their cookies mid-survey, then pressed Continue

    response = browser.post(f"/s/{study.slug}/consent/", {"consent": "yes", "anonymised": "yes"})

    assert response.status_code == 403
    page = text(response)
    assert '<html lang="en-gb" dir="ltr">' in page
    assert "<title>This page has expired" in page
    assert "open the study again from its link" in page
    assert "CSRF" not in page


def test_a_server_error_page_says_answers_are_kept_and_how_to_carry_on(rf):
    response = server_error(rf.get("/s/any/pair/1/"))

    assert response.status_code == 500
    page = text(response)
    assert '<html lang="en">' in page
    assert "open the study again from its link" in page


@pytest.mark.django_db
def test_an_unknown_study_address_gets_a_plain_page_that_says_where_to_go(client):
    response = client.get("/s/no-such-study/?PROLIFIC_PID=x")

    assert response.status_code == 404
    page = text(response)
    assert "<title>Page not found" in page
    assert "open it again from its link" in page


def described_by_targets_exist(page: str) -> list[str]:
    """Every aria-describedby id on the page that names no element (empty when all exist)."""
    ids = set(re.findall(r'\sid="([^"]+)"', page))
    wanted = {name for value in re.findall(r'aria-describedby="([^"]+)"', page) for name in value.split()}
    return sorted(wanted - ids)


@pytest.mark.django_db
def test_a_demographics_page_sent_empty_lists_its_errors_at_the_top_linked_to_each_question():
    study = live_study()
    browser = Client()
    browser.get(link(study), follow=True)
    browser.post(f"/s/{study.slug}/consent/", {"consent": "yes", "anonymised": "yes"})

    blank = dict.fromkeys(
        ["gender", "gender_specify", "age", "religion", "religion_specify", "education", "country"], ""
    )
    response = browser.post(f"/s/{study.slug}/about-you/", blank)  # as a browser sends it: every select unchosen

    page = text(response)
    assert 'role="alert" id="error-summary"' in page
    for name in ("gender", "age", "religion", "education", "country"):
        assert f'<a href="#id_{name}">' in page
    assert "Please choose your age group." in page
    assert "<title>Error: About you" in page
    assert "This field is required" not in page
    assert described_by_targets_exist(page) == []


@pytest.mark.django_db
def test_an_unanswered_consent_or_judging_page_links_its_errors_to_the_first_choice():
    study = live_study()
    browser = Client()
    browser.get(link(study), follow=True)

    consent = text(browser.post(f"/s/{study.slug}/consent/", {"consent": "yes"}))
    assert '<a href="#id_anonymised_0">' in consent
    assert "<title>Error: Information and consent" in consent
    assert described_by_targets_exist(consent) == []

    browser.post(f"/s/{study.slug}/consent/", {"consent": "yes", "anonymised": "yes"})
    demographics = {"gender": "Female", "age": "25-34", "religion": "No religion", "education": "PhD"}
    pair = browser.post(f"/s/{study.slug}/about-you/", {**demographics, "country": "United Kingdom"}, follow=True)
    page = text(browser.post(pair.redirect_chain[-1][0], {"features": "first"}))
    assert 'role="alert" id="error-summary"' in page
    assert '<a href="#id_weighting_0">' in page
    assert '<a href="#id_features_0">' not in page
    assert described_by_targets_exist(page) == []


@pytest.mark.django_db
def test_a_writing_page_with_a_bad_weight_says_so_at_the_top_linked_to_the_field(client):
    study = make_study(systems=("lay",), vignettes=2, reference="lay", answers_per_respondent=1)
    client.get(f"/r/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION}")
    client.post(f"/r/{study.slug}/consent/", {"agree": "yes"})
    typed = {"feature_1": "Honesty", "weight_1": "50", "feature_3": "Harm", "weight_3": "-5", "action": "Tell them."}

    response = client.post(f"/r/{study.slug}/write/1/", typed)

    assert response.status_code == 400
    page = text(response)
    summary = page.split('id="form-errors">')[1].split("</div>")[0]
    assert '<a href="#id_weight_3">Weight of feature 3</a>' in summary
    assert "<title>Error: " in page
    assert "A weight is a whole number from 1 to 100." in summary
    assert described_by_targets_exist(page) == []


@pytest.mark.django_db
def test_the_back_button_after_a_judging_page_says_its_choices_are_saved():
    study = live_study()
    browser = Client()
    browser.get(link(study), follow=True)
    browser.post(f"/s/{study.slug}/consent/", {"consent": "yes", "anonymised": "yes"})
    demographics = {"gender": "Female", "age": "25-34", "religion": "No religion", "education": "PhD"}
    browser.post(f"/s/{study.slug}/about-you/", {**demographics, "country": "United Kingdom"})
    picks = {question.key: "first" for question in study.questions.all()}
    browser.post(f"/s/{study.slug}/pair/1/", picks)

    back = browser.get(f"/s/{study.slug}/pair/1/", follow=True)

    assert back.redirect_chain[-1][0] == f"/s/{study.slug}/pair/2/"
    assert "Your choices for scenario 1 are saved; they cannot be changed." in text(back)
    assert "are saved" not in text(browser.get(f"/s/{study.slug}/pair/2/"))  # said once


@pytest.mark.django_db
def test_a_new_arrival_at_a_full_study_is_turned_away_at_once_with_the_screened_out_code():
    study = live_study(systems=("alpha", "beta"), vignettes=2, repetitions=1, screened_out_code="FULL999")
    Cell.objects.filter(study=study).update(completed=1)

    response = Client().get(link(study), follow=True)

    assert response.redirect_chain[-1][0] == f"/s/{study.slug}/done/"
    assert "the study is full" in text(response)
    assert "cc=FULL999" in text(response)
    participant = Participant.objects.get()
    assert participant.status == Participant.Status.SCREENED_OUT
    assert participant.consented_at is None
    assert participant.finished_at is not None
