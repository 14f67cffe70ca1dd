"""How fragile each significant result is, on the dashboard, in the API and in results.csv; every reported set of
judgments, judges or vignettes confirmed by a refit without them."""

import csv
import io

import numpy as np
import pytest

from analysis.models import AnalysisRun
from analysis.services import read_study_data, refit_study
from analysis.services.claim_fragility import fragile_claims, headline_on, still_significant
from analysis.services.judged import Judged

from .sets_study import make_study_with_sets

FAST = {"bootstrap": 0, "split_halves": 0}
ONE_SET = {
    "published": {"alpha": 0.0, "beta": 0.7, "gamma": -0.1},
    "novel": {"alpha": 0.0, "beta": 0.7, "gamma": -0.1},
}


@pytest.fixture
def fitted(db):
    study = make_study_with_sets(slug="fragile", participants=100, set_abilities=ONE_SET)
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    assert run.status == AnalysisRun.Status.DONE, run.error
    return study, run


def judged_of(study, position=0) -> Judged:
    data = read_study_data(study=study)
    winners, losers, first, clusters, vignettes, style = data.questions[position].arrays()
    names = [system["key"] for system in data.systems]
    return Judged(
        winners, losers, first, clusters, vignettes, style, names, data.reference, FAST | {"order_effect": False}
    )


def test_every_reported_fragility_set_is_confirmed_by_a_refit_without_it(fitted):
    study, _ = fitted
    judged = judged_of(study)
    claims = fragile_claims(judged)
    assert claims, "beta should be significant on the first question"
    for name, _, _, found in claims:
        k = judged.names.index(name)
        for one in found:
            assert one.count is not None, one
            labels = {
                "judgment": np.arange(len(judged.winners)),
                "judge": judged.clusters,
                "vignette": judged.vignettes,
            }
            codes = np.unique(labels[one.unit], return_inverse=True)[1]
            dropped = np.isin(codes, one.removed)
            assert not still_significant(judged, ~dropped, k=k, sign=1.0)  # confirmed: no longer significant
            assert int(dropped.sum()) == one.judgments
            if one.count > 1:  # one unit fewer (the same order) still holds: the count is the smallest
                fewer = np.isin(codes, one.removed[:-1])
                assert still_significant(judged, ~fewer, k=k, sign=1.0)


def test_the_dashboard_api_and_csv_say_how_fragile_each_significant_result_is(staff_client, fitted):
    study, run = fitted
    question = run.read_results().question("features")
    beta = next(c for c in question.fragility if c.system == "beta")
    judgments = next(u for u in beta.units if u.unit == "judgment")
    assert judgments.words == (
        f"holds unless {judgments.count:,} of {judgments.of:,} judgments "
        f"({100 * judgments.count / judgments.of:.1f}%) are dropped"
    )
    assert judgments.of == question.n_judgments
    assert {u.unit for u in beta.units} == {"judgment", "judge", "vignette"}
    assert all(c.p < 0.05 for c in question.fragility)
    page = staff_client.get(f"/dashboard/{study.slug}/").content.decode()
    assert "How fragile each significant result is" in page
    assert judgments.words in page
    api = staff_client.get(f"/api/studies/{study.slug}/results/").json()["results"]["features"]["fragility"]
    assert next(c for c in api if c["system"] == "beta")["units"][0]["count"] == judgments.count
    text = b"".join(staff_client.get(f"/dashboard/{study.slug}/exports/results.csv").streaming_content).decode()
    row = next(
        r
        for r in csv.DictReader(io.StringIO(text))
        if r["question"] == "features" and r["system"] == "beta" and not r["set"]
    )
    assert int(row["fragility_judgments"]) == judgments.count
    assert judgments.words in row["fragility"]


def test_a_result_that_is_not_significant_has_no_fragility(fitted):
    study, run = fitted
    question = run.read_results().question("features")
    tested = headline_on(judged_of(study), np.ones(question.n_judgments, bool))
    significant = {name for k, name in enumerate(tested.item_names) if tested.p[k] < 0.05}
    assert {c.system for c in question.fragility} == significant
