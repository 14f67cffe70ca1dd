"""The results API: token authentication, staff only, studies, progress, results, exports, schema."""

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.urls import include, path
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from analysis import tasks
from analysis.models import AnalysisRun
from analysis.services import refit_study

from ..conftest import make_judged_study, make_study, owner_of_every_study
from .conftest import queued

FAST = {"bootstrap": 50, "split_halves": 10}
MY_PATHS = [
    "/api/studies/",
    "/api/studies/{slug}/",
    "/api/studies/{slug}/progress/",
    "/api/studies/{slug}/results/",
    "/api/studies/{slug}/refit/",
    "/api/studies/{slug}/power/",
    "/api/studies/{slug}/exports/{name}",
    "/api/studies/{slug}/compared-with/{other}/",
]


@pytest.fixture
def token(db):
    """A staff researcher's token; they own every study the test makes (their team's)."""
    user = get_user_model().objects.create_user("researcher", password="pw-12345678", is_staff=True)
    with owner_of_every_study(user):
        yield Token.objects.create(user=user)


@pytest.fixture
def api(token):
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


@pytest.fixture
def fitted(db):
    study = make_judged_study(participants=30, seed=13)
    return study, refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)


@pytest.mark.parametrize(
    "path", ["/api/studies/", "/api/studies/judged/results/", "/api/studies/judged/exports/judgments.csv"]
)
def test_without_a_token_the_api_answers_401(fitted, path):
    response = APIClient().get(path)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")


def test_a_wrong_token_is_401_and_a_non_staff_token_is_403(fitted):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert client.get("/api/studies/").status_code == 401
    judge = get_user_model().objects.create_user("judge", password="pw-12345678")
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=judge).key}")
    assert client.get("/api/studies/").status_code == 403


def test_studies_are_listed_with_their_reference_system(api, fitted):
    make_study(slug="draft")
    page = api.get("/api/studies/").json()
    assert page["count"] == 2
    assert page["next"] is None
    body = page["results"]
    assert {s["slug"] for s in body} == {"judged", "draft"}
    judged = next(s for s in body if s["slug"] == "judged")
    assert judged["reference_system"] == "alpha"
    assert judged["status"] == "live"


def test_the_study_list_comes_a_page_at_a_time(api, db):
    for n in range(5):
        make_study(slug=f"s{n}")
    first = api.get("/api/studies/?page_size=2").json()
    assert first["count"] == 5
    assert [s["slug"] for s in first["results"]] == ["s4", "s3"]
    second = api.get(first["next"]).json()
    assert [s["slug"] for s in second["results"]] == ["s2", "s1"]
    assert second["previous"]
    assert api.get("/api/studies/?page=9").status_code == 404


def test_a_study_detail_lists_systems_questions_and_vignettes(api, fitted):
    body = api.get("/api/studies/judged/").json()
    assert [s["key"] for s in body["systems"]] == ["alpha", "beta", "gamma"]
    assert len(body["questions"]) == 5
    assert body["vignettes"] == ["v1", "v2", "v3"]
    assert api.get("/api/studies/nope/").status_code == 404


def test_progress_counts_cells_and_participants(api, fitted):
    body = api.get("/api/studies/judged/progress/").json()
    assert body["cells"] == 9
    assert body["target"] == 72
    assert body["valid_participants"] == 30
    assert body["by_status"] == [{"status": "completed", "label": "Completed", "count": 30}]


def test_latest_results_are_the_newest_finished_run(api, fitted):
    study, first = fitted
    second = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    body = api.get("/api/studies/judged/results/").json()
    assert body["id"] == second.pk
    assert body["data_hash"] == first.data_hash
    assert body["results"]["features"]["fit"]["reference"] == "alpha"
    # Each question names the interval its se, p, Holm p and stars come from, with its df.
    headline = body["results"]["features"]["headline"]
    assert (headline["interval"], headline["tested"]) == ("cr2_vignette", True)
    assert headline["df"][0] is None  # the reference
    # Satterthwaite per system, at least 1 wherever the system has a test (3 vignettes: near 2).
    assert all((df is None) == (p is None) for df, p in zip(headline["df"][1:], headline["p"][1:], strict=True))
    assert all(df >= 1 for df in headline["df"][1:] if df is not None)
    assert headline["se"][0] == 0.0  # the reference
    assert api.get(f"/api/studies/judged/results/?run={first.pk}").json()["id"] == first.pk
    assert api.get("/api/studies/judged/results/?run=999999").status_code == 404


def test_a_study_without_results_is_404_with_a_reason(api, db):
    make_study(slug="fresh")
    response = api.get("/api/studies/fresh/results/")
    assert response.status_code == 404
    assert "refit it first" in response.json()["detail"]


def test_a_refit_is_queued_and_answers_202(api, fitted, token, memory_broker):
    study, _ = fitted
    response = api.post("/api/studies/judged/refit/")
    assert response.status_code == 202
    assert response.json()["queued"] is True
    assert response.json()["study"] == "judged"
    [message] = queued()
    assert message == {"task": tasks.refit_study.name, "args": [study.pk, "on-demand", token.user.pk]}
    tasks.refit_study(*message["args"])  # what the worker then runs
    latest = AnalysisRun.objects.latest_for(study)
    assert latest.trigger == AnalysisRun.Trigger.ON_DEMAND
    assert latest.requested_by == token.user
    assert api.get("/api/studies/judged/refit/").status_code == 405


def test_session_posts_to_the_api_need_a_csrf_token(fitted, token):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(token.user)
    assert client.post("/api/studies/judged/refit/").status_code == 403


def test_exports_come_as_files(api, fitted):
    response = api.get("/api/studies/judged/exports/judgments.csv", HTTP_ACCEPT="text/csv")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.getvalue().decode())))
    assert len(rows) == 30 * 3 * 5
    assert api.get("/api/studies/judged/exports/results.json").json()["study"] == "judged"
    assert api.get("/api/studies/judged/exports/nope.csv").status_code == 404


def test_the_schema_describes_every_endpoint_and_validates_without_warnings():
    validate_schema(SchemaGenerator().get_schema(request=None, public=True))  # the whole API
    GENERATOR_STATS.reset()
    with GENERATOR_STATS.silence():
        schema = SchemaGenerator(patterns=[path("", include("analysis.urls"))]).get_schema(request=None, public=True)
    validate_schema(schema)
    assert set(MY_PATHS) == set(schema["paths"])
    assert not GENERATOR_STATS, (dict(GENERATOR_STATS._warn_cache), dict(GENERATOR_STATS._error_cache))
    results = schema["paths"]["/api/studies/{slug}/results/"]["get"]
    assert results["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/AnalysisRunOut")
    exports = schema["paths"]["/api/studies/{slug}/exports/{name}"]["get"]
    assert "text/csv" in exports["responses"]["200"]["content"]
    assert {"tokenAuth"} <= {name for entry in results["security"] for name in entry}


def test_the_schema_endpoint_answers_staff(api):
    response = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    assert "/api/studies/{slug}/results/" in response.json()["paths"]


def _json_schema(node, components):
    """The OpenAPI 3.0 schema as plain JSON Schema (nullable as a null type, refs inlined), to validate against."""
    if isinstance(node, list):
        return [_json_schema(value, components) for value in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _json_schema(components[node["$ref"].rsplit("/", 1)[1]], components)
    node = {key: _json_schema(value, components) for key, value in node.items()}
    if node.pop("nullable", False):
        return {"anyOf": [node, {"type": "null"}]}
    return node


def test_a_real_results_response_and_study_page_validate_against_the_published_schema(api, db):
    import jsonschema

    study = make_judged_study(participants=20, seed=3)
    refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]

    def validate(body, path):
        described = schema["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        jsonschema.validate(body, _json_schema(described, components))

    results = api.get("/api/studies/judged/results/").json()
    validate(results, "/api/studies/{slug}/results/")
    question = components["QuestionResult"]["properties"]
    assert {"fit", "intervals", "alternative_fits", "holm_p", "by_vignette"} <= set(question)
    broken = results | {"results": {"features": results["results"]["features"] | {"holm_p": "0.3"}}}
    with pytest.raises(jsonschema.ValidationError):  # the schema is specific enough to catch a wrong type
        validate(broken, "/api/studies/{slug}/results/")

    page = api.get("/api/studies/").json()
    validate(page, "/api/studies/")
    assert page["count"] == 1
    assert page["results"][0]["slug"] == "judged"
