"""What participants see when something goes wrong, and the accessibility basics of the survey forms."""

import re

import pytest
from django.test import Client

from surveys.lifecycle import go_live
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
    assert '<html lang="en">' in page
    assert "<title>This page has expired" in page
    assert "open the study again from its link" in page
    assert "CSRF" not in page


@pytest.mark.django_db
def test_an_unknown_study_address_gets_a_plain_page_that_says_where_to_go(client):
    response = client.get("/s/no-such-study/?PROLIFIC_PID=x")

    assert response.status_code == 404
    page = text(response)
    assert "<title>Page not found" in page
    assert "open it again from its link" in page
