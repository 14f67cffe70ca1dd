"""benchmarks/replicate.py: planted estimates, one run through the survey, and the replications."""

import importlib.util
import json
from argparse import Namespace
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("replicate", ROOT / "benchmarks" / "replicate.py")
replicate = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(replicate)

PAPER = ROOT / "tests" / "fixtures" / "paper"


def arguments(**changes):
    defaults = dict(
        replications=40,
        repetitions=None,
        answer_sd=0.0,
        order_effect=0.0,
        fit_order_effect=False,
        inattentive=0.0,
        bootstrap=50,
        bootstrap_replications=10,
        seed=1,
    )
    return Namespace(**(defaults | changes))


def test_reported_estimates_are_planted_with_null_and_words_as_zero():
    estimates = json.loads((PAPER / "reported_estimates.json").read_text())
    questions = ["features", "weighting", "reasons", "conclusion", "additional_info"]
    planted, notes = replicate.planted_abilities(estimates, "exp2", questions)
    assert planted["features"]["claude-3.7-sonnet"] == -0.35
    assert planted["features"]["gpt-4o"] == 0.0
    assert planted["reasons"] == {}
    assert planted["additional_info"]["gemini-1.5-flash"] == 0.0
    assert notes == [
        "additional_info/gemini-1.5-flash was reported as 'positive, the only notable advantage' without a value: "
        "planted 0"
    ]


def test_the_replications_recover_the_planted_abilities_and_count_coverage():
    truth = np.array([0.0, 0.6, -0.4])
    design = {"vignettes": 6, "repetitions": 10, "per_judge": 3}
    out = replicate.replicate(truth, 0, design, arguments(), np.random.default_rng(2))
    assert out["estimate"].shape == (40, 3)
    assert out["boot_done"].sum() == 10
    se = out["se"][:, 1:].mean()
    assert np.all(np.abs(out["estimate"][:, 1:].mean(axis=0) - truth[1:]) < 4 * se / np.sqrt(40))
    assert np.mean(out["p"][:, 1] < 0.05) > 0.8  # 0.6 on ~180 comparisons is found
    assert 0.8 <= out["wald_covers"][:, 1:].mean() <= 1.0
    assert 0.8 <= out["robust_covers"][:, 1:].mean() <= 1.0
    assert np.all(np.isnan(out["p_holm"][:, 0]))  # the reference is not tested


def test_the_full_design_runs_once_through_the_survey_services_and_is_refitted(db):
    study_file = json.loads((ROOT / "surveys" / "demo" / "demo.study.json").read_text())
    planted = {"features": {"gpt-4o": 0.5}}
    once = replicate.through_the_survey(study_file, planted, arguments(repetitions=1, bootstrap=0))
    run = once["run"]
    assert once["completed"] == once["judges"] > 0
    assert run.n_judgments == once["places"] * len(study_file["questions"])
    assert run.parameters["reference"] == study_file["reference_system"]
    assert set(run.results) == {question["key"] for question in study_file["questions"]}


@pytest.mark.parametrize("experiment", ["exp1", "exp2"])
def test_every_system_the_paper_reports_is_a_system_of_its_study_file(experiment):
    estimates = json.loads((PAPER / "reported_estimates.json").read_text())[experiment]
    systems = {s["key"] for s in json.loads((PAPER / f"{experiment}.study.json").read_text())["systems"]}
    assert {system for values in estimates.values() for system in values} <= systems
