"""The BradleyTerry2 export reproduces, in real R, every number the dashboard's run stores."""

import csv
import importlib
import io
import json
import subprocess
from pathlib import Path

import pytest
from numpy.testing import assert_allclose

from analysis import bradley_terry as bt
from analysis import rscript
from analysis.models import AnalysisRun
from analysis.results.headline import led_by_headline
from analysis.rscript import BT2_COLUMNS, bradleyterry2_script
from analysis.services import read_study_data, refit_study
from analysis.services.simulated_judges import simulate_judges
from surveys.models import Judgment
from surveys.services.study_files import import_study

from .exported import exported

# The module (the package exports its function under the same name): its MIN_VIGNETTES is the rule.
headline_rule = importlib.import_module("analysis.bradley_terry.headline_test")

DEMO = Path(__file__).resolve().parents[2] / "surveys" / "demo" / "demo.study.json"
ABILITIES = {"gpt-4o": 0.5, "claude": 0.2, "philosopher": -0.3, "features:claude": -0.4}
FAST = {"bootstrap": 0, "split_halves": 0}


@pytest.fixture
def simulated(db):
    study = import_study(json.loads(DEMO.read_text(encoding="utf-8")))
    simulate_judges(study=study, judges=40, abilities=ABILITIES, seed=5, order_effect=0.3)
    return study


def stored_numbers(run: AnalysisRun) -> dict[tuple[str, str], dict[str, float]]:
    """(question, system or "first") -> estimate, se, z, p, p_holm, ci_low, ci_high as the run
    stores them: the one place that knows the run's result layout."""
    numbers = {}
    for stored in run.read_results().questions:
        result = led_by_headline(stored)  # se, z, p and interval as the dashboard leads with them
        for k, item in enumerate(result.fit.items):
            numbers[(result.question, item.item)] = {
                key: getattr(item, key) for key in ("estimate", "se", "z", "p", "ci_low", "ci_high")
            } | {"p_holm": result.holm_p[k], "df": result.headline.df[k] if result.headline else None}
        order = stored.fit.order_effect or stored.order_effect
        numbers[(result.question, "first")] = {key: getattr(order, key) for key in ("estimate", "se", "z", "p")}
    return numbers


def run_exported_script(study, run, workdir: Path) -> dict[tuple[str, str], dict[str, float]]:
    """Write the two exported files, run the script with Rscript, read its results file."""
    (workdir / f"{study.slug}-bradleyterry2.csv").write_text(exported(study=study, name="bradleyterry2.csv"))
    (workdir / f"{study.slug}-bradleyterry2.R").write_text(bradleyterry2_script(study=study, run=run))
    done = subprocess.run(
        ["Rscript", f"{study.slug}-bradleyterry2.R"], cwd=workdir, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    text = (workdir / f"{study.slug}-bradleyterry2-results.csv").read_text()
    return {
        (row["question"], row["name"]): {
            key: value if key in ("interval", "tested") else float(value)
            for key, value in row.items()
            if value not in ("NA", "") and key not in ("question", "term", "name")
        }
        for row in csv.DictReader(io.StringIO(text))
    }


def assert_same(ours: dict, r: dict, keys):
    for key in keys:
        # The CR2 sandwich moves in its sixth digit with where glm stops (as in test_headline_test.py).
        rtol = 1e-6 if key in ("estimate", "wald_se", "wald_p") else 2e-5
        assert_allclose(r[key], ours[key], rtol=rtol, atol=1e-6, err_msg=key)


def test_the_data_file_has_one_row_per_valid_judgment_with_who_was_shown_first(simulated):
    table = list(csv.DictReader(io.StringIO(exported(study=simulated, name="bradleyterry2.csv"))))
    assert list(table[0]) == BT2_COLUMNS
    data = read_study_data(study=simulated)
    assert len(table) == data.judgment_count
    assert all(row["shown_first"] in (row["system1"], row["system2"]) for row in table)
    assert all(int(row["win1"]) + int(row["win2"]) == 1 for row in table)
    systems = [s["key"] for s in data.systems]
    assert all(systems.index(row["system1"]) < systems.index(row["system2"]) for row in table)


def test_the_script_says_which_run_it_reproduces_and_with_which_settings(simulated):
    run = refit_study(study=simulated, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST | {"order_effect": True})
    script = bradleyterry2_script(study=simulated)  # no run: the latest finished one
    assert f"as analysis run {run.pk} did" in script
    assert "order_effect <- TRUE" in script
    assert "bias_reduced <- FALSE" in script
    assert 'reference <- "lay-human"' in script


@pytest.mark.r
def test_the_exported_script_reproduces_a_refit_with_the_order_effect_in_real_r(simulated, tmp_path):
    run = refit_study(study=simulated, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST | {"order_effect": True})
    assert run.status == AnalysisRun.Status.DONE
    stored, r = stored_numbers(run), run_exported_script(simulated, run, tmp_path)
    reference = "lay-human"
    compared = 0
    for (question, name), ours in stored.items():
        if name == reference:
            assert (question, name) not in r  # BTm has no coefficient for the reference
            continue
        keys = (
            ("estimate", "se", "z", "p")
            if name == "first"
            else ("estimate", "se", "z", "p", "p_holm", "ci_low", "ci_high")
        )
        assert_same(ours, r[(question, name)], keys)
        compared += 1
    assert compared == 5 * 4  # 3 systems and the order effect on each of the 5 questions
    # The demo's 4 vignettes are enough for the headline test; R (clubSandwich) has the same interval per
    # question, with each system's Satterthwaite df.
    for result in run.read_results().questions:
        assert result.headline.interval == "cr2_vignette"
        for name in ("gpt-4o", "claude", "philosopher"):
            assert r[(result.question, name)]["interval"] == "cr2_vignette"
            assert r[(result.question, name)]["tested"] == "TRUE"
            assert_same(stored[(result.question, name)], r[(result.question, name)], ("df",))


@pytest.mark.r
def test_with_too_few_vignettes_r_reproduces_the_narrower_interval_without_any_p(simulated, tmp_path, monkeypatch):
    monkeypatch.setattr(headline_rule, "MIN_VIGNETTES", 5)  # the demo's 4 vignettes count as too few
    monkeypatch.setattr(rscript, "MIN_VIGNETTES", 5)
    run = refit_study(study=simulated, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    stored, r = stored_numbers(run), run_exported_script(simulated, run, tmp_path)
    kinds = set()
    for result in run.read_results().questions:
        kinds.add(result.headline.interval)
        for name in ("gpt-4o", "claude", "philosopher"):
            ours, theirs = stored[(result.question, name)], r[(result.question, name)]
            assert theirs["interval"] == result.headline.interval
            assert theirs["tested"] == "FALSE"
            assert ours["p"] is ours["p_holm"] is ours["z"] is None  # no test: no p, in R neither
            assert not {"p", "p_holm", "z"} & set(theirs)
            if ours["se"] is None:  # not estimable here: R says NA too
                assert "se" not in theirs
            else:
                assert_same(ours, theirs, ("estimate", "se", "ci_low", "ci_high", "df"))
    assert kinds == {"judge_robust"}


@pytest.mark.r
def test_the_exported_script_reproduces_a_plain_refit_and_its_order_effect_beside(simulated, tmp_path):
    run = refit_study(study=simulated, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    stored, r = stored_numbers(run), run_exported_script(simulated, run, tmp_path)
    for (question, name), ours in stored.items():
        if name != "lay-human":
            assert_same(ours, r[(question, name)], ("estimate", "se", "p"))


@pytest.mark.r
def test_the_bias_reduced_setting_is_exported_as_br_true_and_r_reproduces_the_stored_firth_fit(simulated, tmp_path):
    simulated.bias_reduced = True
    simulated.save()
    run = refit_study(study=simulated, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST | {"order_effect": True})
    assert "bias_reduced <- TRUE" in bradleyterry2_script(study=simulated, run=run)
    r = run_exported_script(simulated, run, tmp_path)
    for (question, name), ours in stored_numbers(run).items():
        if name != "lay-human":
            assert_same(ours, r[(question, name)], ("estimate", "se", "p"))
    data = read_study_data(study=simulated)
    names = [s["key"] for s in data.systems]
    for question in data.questions:
        winners, losers, first, *_ = question.arrays()
        firth = bt.fit(winners, losers, 4, reference=data.reference, first=first, bias_reduced=True, item_names=names)
        for k, name in enumerate(names):
            if k != data.reference:
                assert_same(
                    {"estimate": firth.estimates[k], "wald_se": firth.se[k], "wald_p": firth.p[k]},
                    r[(question.key, name)],
                    ("estimate", "wald_se", "wald_p"),
                )
                # The headline sandwich is the maximum-likelihood fit's (vcovCL is for ML fits), in R too.
                assert r[(question.key, name)]["interval"] == "cr2_vignette"
        assert_allclose(r[(question.key, "first")]["estimate"], firth.order_effect.estimate, rtol=1e-6, atol=1e-9)


def test_a_study_without_a_reference_still_exports_its_judgments(simulated):
    simulated.reference_system = None
    simulated.save()
    table = list(csv.DictReader(io.StringIO(exported(study=simulated, name="bradleyterry2.csv"))))
    assert len(table) == Judgment.objects.valid().count() > 0
    assert 'reference <- "gpt-4o"' in bradleyterry2_script(study=simulated)  # BTm's default: the first level
