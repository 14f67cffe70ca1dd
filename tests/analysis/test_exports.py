"""Exports: judgments as a long CSV, results as CSV and JSON, a BradleyTerry2 file, demographics."""

import csv
import io
import json

import pytest

from analysis import bradley_terry as bt
from analysis.exports import bradleyterry2_script, hashed_participant, results_json
from analysis.models import AnalysisRun
from analysis.services import refit_study
from surveys.models import Judgment, Participant

from ..conftest import fabricate_judgments, make_judged_study
from .exported import exported

FAST = {"bootstrap": 50, "split_halves": 10}

# The published headers, spelled out: researchers' scripts read these names, so a renamed column
# must fail here rather than follow the code's own constant.
JUDGMENT_HEADER = [
    "participant", "vignette", "question", "system_a", "system_b", "shown_first",
    "winner", "loser", "winner_position", "assignment_position", "seconds",
]  # fmt: skip
RESULT_HEADER = [
    "question", "system", "label", "estimate", "se", "z", "p", "p_holm", "stars", "ci_low", "ci_high",
    "interval", "df", "tested", "why_not", "not_estimable", "wald_ci_low", "wald_ci_high", "boot_ci_low", "boot_ci_high", "style_estimate", "style_se", "wins", "losses",
    "rank", "rank_low", "rank_high", "rank_claim", "band_low", "band_high",
    "set", "compared_with", "fragility_judgments", "fragility_judges", "fragility_vignettes", "fragility",
]  # fmt: skip
BT2_HEADER = ["question", "system1", "system2", "shown_first", "win1", "win2", "participant", "vignette", "set"]
DEMOGRAPHIC_HEADER = ["variable", "value", "n", "percent"]


def rows(text):
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture
def judged(db):
    return make_judged_study(participants=30, seed=11)


@pytest.fixture
def run(judged):
    return refit_study(study=judged, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)


def test_the_judgments_csv_has_one_row_per_valid_pick_with_hashed_participants(judged):
    fabricate_judgments(
        judged, {"alpha": 0, "beta": 0, "gamma": 0}, participants=2, pid_prefix="X", exclusion="too-fast"
    )
    text = exported(study=judged, name="judgments.csv")
    table = rows(text)
    assert text.splitlines()[0].split(",") == JUDGMENT_HEADER
    assert len(table) == Judgment.objects.valid().count() == 30 * 3 * 5
    first = Judgment.objects.valid().order_by("id").select_related("assignment__participant").first()
    pid = first.assignment.participant.prolific_pid
    assert table[0]["participant"] == hashed_participant(pid)
    assert len(table[0]["participant"]) == 16
    assert pid not in text
    assert table[0]["shown_first"] == first.assignment.first_answer.system.key
    assert table[0]["winner"] == first.winner.system.key
    assert table[0]["question"] == first.question.key
    assert {table[0]["system_a"], table[0]["system_b"]} == {table[0]["winner"], table[0]["loser"]}
    assert not any(row["participant"] == hashed_participant("X00000") for row in table)


def test_the_pseudonym_depends_on_the_secret_key(settings):
    before = hashed_participant("5f1a")
    settings.SECRET_KEY = "another-key"
    assert hashed_participant("5f1a") != before


def test_results_csv_has_a_row_per_question_and_system_with_stars(run):
    table = rows(exported(study=run.study, name="results.csv", run=run))
    assert list(table[0]) == RESULT_HEADER
    assert len(table) == 5 * 3
    beta = next(row for row in table if row["question"] == "features" and row["system"] == "beta")
    fit = run.results["features"]["fit"]["items"][1]
    assert float(beta["estimate"]) == pytest.approx(fit["estimate"])
    assert beta["label"] == "Beta"
    assert beta["stars"] in {"", "*", "**", "***"}
    # se, p and the interval are the headline's, which the row names; the Wald interval is beside them.
    headline = run.results["features"]["headline"]
    assert (beta["interval"], beta["tested"]) == (headline["interval"], "True")
    assert float(beta["df"]) == pytest.approx(headline["df"][1])  # the Satterthwaite df of beta's test
    assert float(beta["ci_low"]) == pytest.approx(headline["ci_low"][1])
    assert float(beta["wald_ci_low"]) == pytest.approx(fit["ci_low"])
    reference = next(row for row in table if row["question"] == "features" and row["system"] == "alpha")
    assert reference["estimate"] == "0.0"
    assert reference["p"] == ""


def test_results_json_is_the_whole_snapshot(run):
    document = json.loads(results_json(run=run))
    assert document["data_hash"] == run.data_hash
    assert document["git_revision"] == run.git_revision
    assert document["parameters"]["reference"] == "alpha"
    assert set(document["results"]) == set(run.results)


def test_the_bradleyterry2_file_refits_to_the_same_estimates(judged, run):
    table = rows(exported(study=judged, name="bradleyterry2.csv"))
    assert list(table[0]) == BT2_HEADER
    features = [row for row in table if row["question"] == "features"]
    assert sum(int(r["win1"]) + int(r["win2"]) for r in features) == run.results["features"]["n_judgments"]
    names = ["alpha", "beta", "gamma"]
    winners, losers, counts = [], [], []
    for row in features:
        for winner, loser, n in (
            (row["system1"], row["system2"], row["win1"]),
            (row["system2"], row["system1"], row["win2"]),
        ):
            winners.append(names.index(winner))
            losers.append(names.index(loser))
            counts.append(int(n))
    refit = bt.fit(winners, losers, 3, reference=0, counts=counts, item_names=names)
    expected = [item["estimate"] for item in run.results["features"]["fit"]["items"]]
    assert refit.estimates.tolist() == pytest.approx(expected, abs=1e-8)


def test_the_r_script_runs_btm_with_the_reference_as_refcat(judged):
    script = bradleyterry2_script(study=judged)
    assert "library(BradleyTerry2)" in script
    assert 'reference <- "alpha"' in script
    assert "refcat = reference" in script
    assert 'read.csv("judged-bradleyterry2.csv"' in script
    assert 'c("alpha", "beta", "gamma")' in script


def test_demographics_count_valid_participants_per_category(judged):
    Participant.objects.filter(study=judged).update(demographics={"gender": "Woman", "age": "25-34"})
    one = Participant.objects.filter(study=judged).order_by("id").first()
    Participant.objects.filter(pk=one.pk).update(demographics={"gender": "Man", "languages": ["en", "de"]})
    fabricate_judgments(
        judged,
        {"alpha": 0, "beta": 0, "gamma": 0},
        participants=3,
        pid_prefix="X",
        exclusion="failed-attention",
        demographics=lambda n: {"gender": "Excluded"},
    )
    table = rows(exported(study=judged, name="demographics.csv"))
    assert list(table[0]) == DEMOGRAPHIC_HEADER
    assert table[0] == {"variable": "valid participants", "value": "", "n": "30", "percent": "100.0"}
    gender = {row["value"]: row for row in table if row["variable"] == "gender"}
    assert gender["Woman"]["n"] == "29"
    assert gender["Woman"]["percent"] == "96.7"
    assert gender["Man"]["n"] == "1"
    assert "Excluded" not in gender
    assert {row["value"] for row in table if row["variable"] == "languages"} == {"en", "de"}


@pytest.mark.parametrize(
    ("name", "content_type"),
    [
        ("judgments.csv", "text/csv"),
        ("results.csv", "text/csv"),
        ("results.json", "application/json"),
        ("bradleyterry2.csv", "text/csv"),
        ("bradleyterry2.R", "text/plain"),
        ("demographics.csv", "text/csv"),
    ],
)
def test_every_export_downloads_from_the_dashboard(staff_client, run, name, content_type):
    response = staff_client.get(f"/dashboard/judged/exports/{name}")
    assert response.status_code == 200
    assert response["Content-Type"] == content_type
    assert response["Content-Disposition"] == f'attachment; filename="judged-{name}"'


def test_results_exports_need_a_finished_run_and_unknown_names_are_404(staff_client, judged):
    assert staff_client.get("/dashboard/judged/exports/results.csv").status_code == 404
    assert staff_client.get("/dashboard/judged/exports/judgments.csv").status_code == 200
    assert staff_client.get("/dashboard/judged/exports/passwords.txt").status_code == 404
