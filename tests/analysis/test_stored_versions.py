"""Runs stored before results had a schema version (version 1) still show on the dashboard, in exports and the API."""

import csv
import io
import json

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from analysis.models import AnalysisRun
from analysis.results import CURRENT_VERSION, ShapeError, read

from ..conftest import make_study


def item(name, estimate, se, z, p, low, high, wins, losses):
    return {
        "item": name, "estimate": estimate, "se": se, "z": z, "p": p,
        "ci_low": low, "ci_high": high, "wins": wins, "losses": losses,
    }  # fmt: skip


def v1_fit(items, problems=()):
    """BTResult.as_dict() as the version-1 code stored it."""
    return {
        "reference": "alpha", "n_comparisons": 120, "log_likelihood": -75.1, "deviance": 150.2,
        "null_deviance": 166.4, "converged": True, "iterations": 5, "items": items,
        "order_effect": None, "covariate_effects": None, "problems": list(problems),
    }  # fmt: skip


# Written as the code before schema versions wrote it (analysis/services/fitting.py, November 2026):
# "bootstrap" and "style_controlled" had keys of their own; "weighting" had no valid judgments.
V1_SYSTEMS = [
    {"key": "alpha", "label": "Alpha", "kind": "llm"},
    {"key": "beta", "label": "Beta model", "kind": "llm"},
    {"key": "gamma", "label": "Gamma", "kind": "human"},
]
V1_ITEMS = [
    item("alpha", 0.0, 0.0, None, None, 0.0, 0.0, 50, 30),
    item("beta", 0.812, 0.25, 3.248, 0.00116, 0.322, 1.302, 52, 28),
    item("gamma", -0.604, 0.26, -2.323, 0.0202, -1.114, -0.094, 18, 62),
]
V1_RESULTS = {
    "features": {
        "question": "features",
        "text": "Which answer names the morally relevant features better?",
        "n_judgments": 120,
        "fit": v1_fit(V1_ITEMS),
        "problems": [],
        "n_participants": 40,
        "holm_p": [None, 0.00232, 0.0202],
        "stars": ["", "**", "*"],
        "bootstrap": {
            "n_boot": 200,
            "n_failed": 1,
            "level": 0.95,
            "ci_low": [0.0, 0.301, -1.2],
            "ci_high": [0.0, 1.35, -0.05],
            "se": [0.0, 0.27, 0.28],
        },
        "order_effect": {
            "name": "order",
            "estimate": 0.11,
            "se": 0.19,
            "z": 0.58,
            "p": 0.562,
            "ci_low": -0.26,
            "ci_high": 0.48,
        },
        "style_controlled": v1_fit(V1_ITEMS)
        | {
            "covariate_effects": [
                {
                    "name": "covariate 0",
                    "estimate": 0.031,
                    "se": 0.05,
                    "z": 0.62,
                    "p": 0.535,
                    "ci_low": -0.067,
                    "ci_high": 0.129,
                }
            ]
        },
        "first_position_rate": 0.525,
        "separation_reliability": 0.61,
        "split_half_reliability": 0.44,
        "by_vignette": [
            {
                "vignette_id": 7,
                "n_judgments": 60,
                "estimates": [0.0, 0.9, -0.5],
                "se": [0.0, 0.4, 0.4],
                "wins": [25, 26, 9],
                "losses": [15, 14, 31],
                "problems": [],
                "vignette": "v1",
            },
        ],
        "position": 0,
    },
    "weighting": {
        "question": "weighting",
        "text": "Which answer weighs them better?",
        "n_judgments": 0,
        "fit": None,
        "problems": ["No valid judgments on this question yet."],
        "position": 1,
    },
    "reasons": {
        "question": "reasons",
        "text": "Which answer gives better reasons?",
        "n_judgments": 120,
        "fit": v1_fit(V1_ITEMS),
        "problems": [],
        "n_participants": 40,
        "holm_p": [None, 0.002, 0.04],
        "stars": ["", "**", "*"],
        "bootstrap": None,
        "order_effect": None,
        "style_controlled": {
            "items": None,
            "covariate_effects": None,
            "problems": ["No length differences to control for."],
        },
        "first_position_rate": 0.5,
        "separation_reliability": None,
        "split_half_reliability": None,
        "by_vignette": [],
        "position": 2,
    },
}
V1_HALO = {"questions": ["features", "reasons"], "matrix": [[1.0, 0.93], [0.93, 1.0]], "mean_off_diagonal": 0.93}


@pytest.fixture
def old_run(db):
    study = make_study(slug="old", systems=("alpha", "beta", "gamma"), reference="alpha")
    return AnalysisRun.objects.create(
        study=study,
        trigger=AnalysisRun.Trigger.NIGHTLY,
        status=AnalysisRun.Status.DONE,
        finished_at=timezone.now(),
        n_judgments=240,
        n_participants=40,
        parameters={"reference": "alpha", "bootstrap": 200, "seed": 1, "order_effect": False},
        systems=V1_SYSTEMS,
        results=V1_RESULTS,
        halo=V1_HALO,
    )  # schema_version: the column's default for rows from before it, 1


def test_runs_stored_before_the_schema_version_are_version_1(old_run):
    old_run.refresh_from_db()
    assert old_run.schema_version == 1
    assert CURRENT_VERSION == 4


def test_a_version_1_run_reads_as_todays_shape(old_run):
    fitted = old_run.read_results()
    assert [q.question for q in fitted.questions] == ["features", "weighting", "reasons"]
    features = fitted.question("features")
    assert features.intervals["bootstrap"].ci_low == [0.0, 0.301, -1.2]
    assert features.intervals["bootstrap"].details == {"n_boot": 200, "n_failed": 1}
    assert features.alternative_fits["style_controlled"].fit.covariate_effects[0].estimate == 0.031
    assert features.by_vignette[0].vignette == "v1"
    assert fitted.question("weighting").fit is None
    assert fitted.question("weighting").intervals == {}
    reasons = fitted.question("reasons")
    assert reasons.intervals == {}
    assert reasons.alternative_fits["style_controlled"].fit is None
    assert reasons.alternative_fits["style_controlled"].problems == ["No length differences to control for."]
    assert fitted.halo.mean_off_diagonal == 0.93
    assert fitted.labels()["beta"] == "Beta model"


def test_the_dashboard_shows_a_version_1_run(client, researcher, old_run):
    page = client.get(f"/dashboard/old/?run={old_run.pk}").content.decode()
    assert '<th scope="row">Beta model</th>' in page
    assert "[0.30, 1.35]" in page  # the bootstrap interval of beta
    assert "[0.32, 1.30]" in page  # its Wald interval
    # Stored before the headline interval: it leads with the Wald numbers and says so.
    assert "This run was stored before the headline interval: SE, p, Holm p, stars and 95% CI are the Wald" in page
    assert "0.031 (SE 0.050, p 0.5350)" in page  # the style effect
    assert "No valid judgments on this question yet." in page
    assert "No length differences to control for." in page
    assert "Which interval answers which question" in page
    assert "Bootstrap CI: Judges:" in page
    assert ">0.93</td>" in page  # halo
    assert client.get(f"/dashboard/old/plots/features.svg?run={old_run.pk}").status_code == 200


def test_the_exports_and_the_api_read_a_version_1_run(client, researcher, old_run):
    text = client.get(f"/dashboard/old/exports/results.csv?run={old_run.pk}").getvalue().decode()
    table = list(csv.DictReader(io.StringIO(text)))
    assert [row["question"] for row in table] == ["features"] * 3 + ["reasons"] * 3
    beta = table[1]
    assert (beta["system"], beta["label"], beta["estimate"], beta["p_holm"], beta["stars"]) == (
        "beta", "Beta model", "0.812", "0.00232", "**",
    )  # fmt: skip
    assert (beta["boot_ci_low"], beta["boot_ci_high"], beta["style_estimate"]) == ("0.301", "1.35", "0.812")
    assert table[4]["boot_ci_low"] == ""
    assert table[4]["style_estimate"] == ""
    document = json.loads(client.get(f"/dashboard/old/exports/results.json?run={old_run.pk}").content)
    assert document["schema_version"] == CURRENT_VERSION
    assert document["results"]["features"]["intervals"]["bootstrap"]["ci_high"] == [0.0, 1.35, -0.05]
    api = APIClient()
    api.force_authenticate(researcher)
    body = api.get(f"/api/studies/old/results/?run={old_run.pk}").json()
    assert body["schema_version"] == CURRENT_VERSION
    assert body["results"] == document["results"]
    assert body["results"]["features"]["headline"] is None  # no headline was chosen for it
    assert (beta["interval"], beta["df"]) == ("wald", "")


def test_a_renamed_key_fails_loudly_instead_of_showing_blanks():
    renamed = {"features": {**V1_RESULTS["features"], "bootstrapp": V1_RESULTS["features"]["bootstrap"]}}
    with pytest.raises(ShapeError, match="unknown keys \\['bootstrapp'\\]"):
        read(version=1, systems=V1_SYSTEMS, results=renamed, halo=V1_HALO)
    missing = {"features": {key: value for key, value in V1_RESULTS["features"].items() if key != "n_judgments"}}
    with pytest.raises(ShapeError, match="missing keys \\['n_judgments'\\]"):
        read(version=1, systems=V1_SYSTEMS, results=missing, halo=V1_HALO)


def test_runs_from_before_questions_carried_a_position_keep_the_order_stored():
    unplaced = {key: {k: v for k, v in V1_RESULTS[key].items() if k != "position"} for key in ("reasons", "features")}
    fitted = read(version=1, systems=V1_SYSTEMS, results=unplaced, halo=V1_HALO)
    assert [(q.question, q.position) for q in fitted.questions] == [("reasons", 0), ("features", 1)]


def version_3_question(interval: str, df: int) -> dict:
    items = [
        {
            "item": k,
            "estimate": e,
            "se": 0.2,
            "z": 1.0,
            "p": 0.3,
            "ci_low": -1.0,
            "ci_high": 1.0,
            "wins": 3,
            "losses": 2,
        }
        for k, e in (("alpha", 0.0), ("beta", 0.4))
    ]
    fit = {"reference": "alpha", "n_comparisons": 5, "log_likelihood": -3.0, "deviance": 6.0, "null_deviance": 7.0,
           "converged": True, "iterations": 4, "items": items}  # fmt: skip
    headline = {"interval": interval, "label": "x", "answers": "x", "df": df, "n_vignettes": 2, "n_judges": 30,
                "level": 0.95, "se": [0.0, 0.2], "p": [None, 0.01], "ci_low": [0.0, 0.1], "ci_high": [0.0, 0.8],
                "not_estimable": ["", ""], "why": "Only 2 vignettes."}  # fmt: skip
    return {"question": "q", "text": "", "position": 0, "n_judgments": 5, "fit": fit, "holm_p": [None, 0.01],
            "stars": ["", "*"], "headline": headline}  # fmt: skip


def test_a_version_3_judge_robust_headline_reads_without_p_holm_or_stars_and_a_two_way_one_keeps_its_df():
    systems = [{"key": "alpha", "label": "Alpha", "kind": "llm"}, {"key": "beta", "label": "Beta", "kind": "llm"}]
    fallback = read(version=3, systems=systems, results={"q": version_3_question("judge_robust", 29)}, halo={})
    question = fallback.questions[0]
    assert (question.headline.tested, question.headline.p, question.holm_p, question.stars) == (
        False, [None, None], [None, None], ["", ""],
    )  # fmt: skip
    assert "No test is shown" in question.headline.why
    two_way = read(version=3, systems=systems, results={"q": version_3_question("two_way_robust", 1)}, halo={})
    headline = two_way.questions[0].headline
    assert (headline.tested, headline.df, two_way.questions[0].stars) == (True, [1, 1], ["", "*"])
