"""Both refit buttons (dashboard and API) through request_refit: queued, run at once, or broker down."""

import pytest
from rest_framework.test import APIClient

from analysis import tasks
from analysis.models import AnalysisRun
from analysis.services import RefitOutcome, request_refit

from ..conftest import make_judged_study
from .conftest import queued


@pytest.fixture
def judged(db):
    return make_judged_study(participants=12, seed=3)


@pytest.fixture
def api(researcher):
    client = APIClient(enforce_csrf_checks=True)
    client.force_authenticate(researcher)
    return client


def test_with_a_broker_the_refit_is_sent_to_the_refit_queue_and_nothing_runs_here(judged, researcher, memory_broker):
    asked = request_refit(study=judged, requested_by=researcher)
    assert asked.outcome == RefitOutcome.QUEUED
    assert asked.run is None
    assert queued() == [{"task": tasks.refit_study.name, "args": [judged.pk, "on-demand", researcher.pk]}]
    assert not AnalysisRun.objects.exists()


def test_without_a_broker_the_refit_runs_in_the_request_and_says_so(judged, no_broker):
    asked = request_refit(study=judged)
    assert asked.outcome == RefitOutcome.RAN
    assert asked.run.status == AnalysisRun.Status.DONE
    assert "No task queue is configured" in asked.message
    assert f"run {asked.run.pk}" in asked.message


def test_with_the_broker_down_nothing_is_queued_or_stored_and_the_researcher_is_told(judged, closed_broker):
    asked = request_refit(study=judged)
    assert asked.outcome == RefitOutcome.UNREACHABLE
    assert asked.run is None
    assert "cannot be reached" in asked.message
    assert "manage.py refit judged" in asked.message
    assert not AnalysisRun.objects.exists()


def test_the_dashboard_button_with_the_broker_down_shows_a_message_not_a_500(client, researcher, judged, closed_broker):
    response = client.post("/dashboard/judged/refit/", follow=True)
    assert response.status_code == 200
    assert response.redirect_chain == [("/dashboard/judged/", 302)]
    assert "The task queue cannot be reached, so no refit of" in response.content.decode()
    assert not AnalysisRun.objects.exists()


def test_the_api_button_with_the_broker_down_is_a_json_503(api, judged, closed_broker):
    response = api.post("/api/studies/judged/refit/")
    assert response.status_code == 503
    assert response["Content-Type"] == "application/json"
    assert "cannot be reached" in response.json()["detail"]
    assert not AnalysisRun.objects.exists()


def test_the_api_button_with_a_broker_answers_202_queued(api, researcher, judged, memory_broker):
    response = api.post("/api/studies/judged/refit/")
    assert response.status_code == 202
    assert response.json() | {"detail": ""} == {"queued": True, "study": "judged", "run": None, "detail": ""}
    assert [message["args"] for message in queued()] == [[judged.pk, "on-demand", researcher.pk]]


def test_the_api_button_without_a_broker_answers_201_with_the_run(api, judged, no_broker):
    response = api.post("/api/studies/judged/refit/")
    run = AnalysisRun.objects.get()
    assert response.status_code == 201
    assert response.json()["queued"] is False
    assert response.json()["run"] == run.pk


def test_the_dashboard_button_without_a_broker_shows_the_new_run(client, researcher, judged, no_broker):
    page = client.post("/dashboard/judged/refit/", follow=True).content.decode()
    run = AnalysisRun.objects.get()
    finished = run.finished_at.strftime("%Y-%m-%d %H:%M UTC")
    assert f"Refitted: run {run.pk} finished at {finished}" in page
    assert "queued" not in page
    assert run.requested_by == researcher
