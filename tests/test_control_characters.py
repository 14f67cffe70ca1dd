"""A control character (NUL) in a link's query string is a clear 400, not a 500 from the database (issue 35)."""

import pytest
from django.test import Client

from tests.conftest import make_study

PID, SESSION = "a" * 24, "b" * 24


@pytest.mark.django_db
@pytest.mark.parametrize("survey", ["s", "r"])
@pytest.mark.parametrize("name", ["PROLIFIC_PID", "STUDY_ID", "SESSION_ID"])
def test_a_nul_in_a_prolific_parameter_is_a_400_that_says_why(survey, name):
    make_study(slug="nul")
    params = {"PROLIFIC_PID": PID, "STUDY_ID": "c" * 24, "SESSION_ID": SESSION, name: "a\x00b"}
    response = Client().get(f"/{survey}/nul/", params)
    assert response.status_code == 400
    assert "control character (such as NUL)" in response.content.decode()


@pytest.mark.django_db
def test_a_nul_in_an_admin_search_is_a_400(admin_client):
    assert admin_client.get("/admin/surveys/participant/", {"q": "\x00"}).status_code == 400
    assert admin_client.get("/admin/surveys/participant/", {"q": "tab\there"}).status_code == 200
