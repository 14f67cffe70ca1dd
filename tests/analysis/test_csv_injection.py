"""CSV exports never hand a spreadsheet a formula (OWASP CSV injection), from the dashboard or the API."""

import csv
import io

import pytest
from rest_framework.test import APIClient

from analysis.csv_text import csv_cell
from analysis.exports import EXPORTS
from analysis.models import AnalysisRun
from analysis.services import refit_study
from surveys.models import Answer, Feature, Participant, System
from surveys.models.freeze import freeze_lifted

from ..conftest import make_judged_study

FAST = {"bootstrap": 20, "split_halves": 4}
# One payload per character a spreadsheet reads as the start of a formula.
PAYLOADS = ["=cmd|' /C calc'!A0", "+1+cmd|' /C calc'!A0", "-2+3+cmd|' /C calc'!A0", "@SUM(1+9)*cmd", "\t=1+1", "\r=1+1"]
RUNNABLE = ("=", "+", "-", "@", "\t", "\r")
CSV_EXPORTS = [name for name, (content_type, _needs_run) in EXPORTS.items() if content_type == "text/csv"]


@pytest.fixture
def hostile(db):
    """A study where every free-text field a participant, respondent or LLM fills holds a formula."""
    study = make_judged_study(participants=12, seed=3)
    people = list(Participant.objects.filter(study=study).order_by("id"))
    for n, person in enumerate(people):
        payload = PAYLOADS[n % len(PAYLOADS)]
        person.demographics = {
            "gender": "Other/prefer to specify",
            "gender_specify": payload,
            "age": "25-34",
            "religion": "Other/please specify",
            "religion_specify": payload,
            "languages": [payload, "en"],
        }
        person.save(update_fields=["demographics"])
    with freeze_lifted():  # the study is live: the payloads arrive as an operator's data fix
        Answer.objects.filter(system__study=study).update(
            action=PAYLOADS[0], additional_information=PAYLOADS[1], raw_text=PAYLOADS[3]
        )
        Feature.objects.filter(answer__system__study=study).update(feature=PAYLOADS[2], reason=PAYLOADS[4])
        System.objects.filter(study=study, key="beta").update(label=PAYLOADS[0])  # a researcher's label too
    refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    return study


def cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def assert_nothing_runs(text: str) -> None:
    runnable = [cell for cell in cells(text) if cell.startswith(RUNNABLE) and not is_number(cell)]
    assert runnable == []


def is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("name", CSV_EXPORTS)
def test_no_dashboard_csv_export_holds_a_cell_a_spreadsheet_would_run(client, researcher, hostile, name):
    response = client.get(f"/dashboard/{hostile.slug}/exports/{name}")
    assert response.status_code == 200
    assert_nothing_runs(response.getvalue().decode())


@pytest.mark.parametrize("name", CSV_EXPORTS)
def test_no_api_csv_export_holds_a_cell_a_spreadsheet_would_run(researcher, hostile, name):
    api = APIClient(enforce_csrf_checks=True)
    api.force_authenticate(researcher)
    response = api.get(f"/api/studies/{hostile.slug}/exports/{name}", HTTP_ACCEPT="text/csv")
    assert response.status_code == 200
    assert_nothing_runs(response.getvalue().decode())


def test_a_participants_formula_arrives_as_text_with_a_leading_quote(client, researcher, hostile):
    text = client.get(f"/dashboard/{hostile.slug}/exports/demographics.csv").getvalue().decode()
    values = {row["value"] for row in csv.DictReader(io.StringIO(text))}
    assert {"'" + payload.replace("\r", "\n") for payload in PAYLOADS} <= values


def test_the_researchers_label_is_escaped_and_negative_estimates_stay_numbers(client, researcher, hostile):
    text = client.get(f"/dashboard/{hostile.slug}/exports/results.csv").getvalue().decode()
    table = list(csv.DictReader(io.StringIO(text)))
    assert {row["label"] for row in table if row["system"] == "beta"} == {"'" + PAYLOADS[0]}
    estimates = [float(row["estimate"]) for row in table if row["estimate"]]
    assert any(estimate < 0 for estimate in estimates)  # gamma is below the reference: "-0.6", unquoted


def test_only_strings_are_escaped():
    assert csv_cell(-0.25) == -0.25
    assert csv_cell(-3) == -3
    assert csv_cell(None) == ""
    assert csv_cell("-0.25") == "'-0.25"  # a string is text, whatever it looks like
    assert csv_cell("a=b") == "a=b"
    assert csv_cell("") == ""


def test_a_carriage_return_inside_a_text_cannot_split_a_row():
    assert csv_cell("\r=1+1") == "'\n=1+1"
    assert csv_cell("a\r\nb\rc") == "a\nb\nc"
