"""Results by vignette set on the dashboard, the API and results.csv: each system per set and its difference."""

import csv
import io

import pytest

from analysis.models import AnalysisRun
from analysis.services import refit_study

from .sets_study import make_study_with_sets

FAST = {"bootstrap": 0, "split_halves": 0}


@pytest.fixture
def with_sets(db):
    study = make_study_with_sets()
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    assert run.status == AnalysisRun.Status.DONE, run.error
    return study, run


def differences(run, question="features"):
    return {d.system: d for d in run.read_results().question(question).by_set.differences}


def test_a_refit_stores_each_sets_abilities_and_the_tested_difference(with_sets):
    _, run = with_sets
    by_set = run.read_results().question("features").by_set
    assert [one.set for one in by_set.sets] == ["published", "novel"]
    assert [one.n_vignettes for one in by_set.sets] == [4, 4]
    found = differences(run)
    assert set(found) == {"beta", "gamma"}
    gamma = found["gamma"]
    assert gamma.sets == ["published", "novel"]
    assert gamma.estimate == pytest.approx(by_set.sets[1].estimates[2] - by_set.sets[0].estimates[2])
    assert gamma.ci_low < gamma.estimate < gamma.ci_high < 0  # gamma is worse on the novel vignettes
    assert gamma.p < 0.05
    assert gamma.p <= gamma.p_holm
    assert gamma.df > 1
    assert found["beta"].ci_low < 0 < found["beta"].ci_high  # beta is as good on both


def test_the_dashboard_shows_the_sets_the_differences_and_their_plot(staff_client, with_sets):
    study, run = with_sets
    page = staff_client.get(f"/dashboard/{study.slug}/").content.decode()
    assert "By vignette set" in page
    assert "Difference novel − published" in page
    assert "4 vignettes" in page
    assert "Holm" in page
    gamma = differences(run)["gamma"]
    assert f"[{gamma.ci_low:.2f}, {gamma.ci_high:.2f}]" in page
    plot = staff_client.get(f"/dashboard/{study.slug}/plots/features/sets.svg?run={run.pk}")
    assert plot.status_code == 200
    assert plot["Content-Type"] == "image/svg+xml"
    svg = plot.content.decode()
    assert "novel − published" in svg
    assert "Gamma" in svg


def test_a_study_with_one_set_shows_no_set_section_and_has_no_set_plot(staff_client, db):
    from ..conftest import make_judged_study

    study = make_judged_study(participants=30)
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    assert run.read_results().question("features").by_set is None
    assert "By vignette set" not in staff_client.get(f"/dashboard/{study.slug}/").content.decode()
    assert staff_client.get(f"/dashboard/{study.slug}/plots/features/sets.svg").status_code == 404


def test_the_set_plot_needs_a_login_and_the_study_of_ones_team(client, with_sets):
    study, _ = with_sets
    assert client.get(f"/dashboard/{study.slug}/plots/features/sets.svg").status_code == 302


def test_the_api_gives_the_sets_and_the_differences(staff_client, with_sets):
    study, run = with_sets
    results = staff_client.get(f"/api/studies/{study.slug}/results/").json()["results"]
    stored = results["features"]["by_set"]
    assert [one["set"] for one in stored["sets"]] == ["published", "novel"]
    gamma = next(d for d in stored["differences"] if d["system"] == "gamma")
    assert set(gamma) == {"system", "sets", "estimate", "se", "ci_low", "ci_high", "p", "p_holm", "df"}
    assert gamma["estimate"] == pytest.approx(differences(run)["gamma"].estimate)


def test_results_csv_has_a_row_per_set_and_per_difference(staff_client, with_sets):
    study, run = with_sets
    text = b"".join(staff_client.get(f"/dashboard/{study.slug}/exports/results.csv").streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    features = [row for row in rows if row["question"] == "features" and row["system"] == "gamma"]
    by_kind = {(row["set"], row["compared_with"]): row for row in features}
    assert set(by_kind) == {("", ""), ("published", ""), ("novel", ""), ("novel", "published")}
    difference = by_kind[("novel", "published")]
    gamma = differences(run)["gamma"]
    assert float(difference["estimate"]) == pytest.approx(gamma.estimate)
    assert float(difference["p_holm"]) == pytest.approx(gamma.p_holm)
    assert float(difference["df"]) == pytest.approx(gamma.df)
