"""The study's bias-reduced setting: Firth's fit becomes the reported one, and the dashboard says what it changed."""

import re

import pytest

from analysis.models import AnalysisRun
from analysis.services import refit_study
from surveys.services.study_files import StudyFileError, export_study, import_study

from ..conftest import make_judged_study

FAST = {"bootstrap": 30, "split_halves": 5}
NEVER_WINS = {"alpha": 0.0, "beta": 0.5, "gamma": -40.0}


def test_with_the_setting_a_system_that_never_wins_gets_a_reported_estimate_and_its_headline_says_why_not(db):
    study = make_judged_study(slug="sep", abilities=NEVER_WINS, participants=40)
    plain = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    study.bias_reduced = True
    study.save()
    reduced = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)

    assert plain.parameters["bias_reduced"] is False
    assert plain.read_results().question("features").fit.items[2].estimate is None
    features = reduced.read_results().question("features")
    assert reduced.parameters["bias_reduced"] is True
    gamma = features.fit.items[2]
    assert gamma.estimate < -2
    assert gamma.p < 0.05
    # The headline sandwiches the maximum-likelihood fit (docs/statistics.md), which does not exist for a
    # system that never wins: its headline numbers and Holm place are withheld with the reason, not printed.
    assert features.headline.p[2] is None
    assert features.holm_p[2] is None
    assert features.headline.not_estimable[2]
    assert features.holm_p[1] is not None  # the others keep theirs
    # Reported and the plain fit beside it; Firth's own column would only repeat the estimates.
    assert set(features.alternative_fits) == {"style_controlled", "maximum_likelihood"}
    assert features.alternative_fits["maximum_likelihood"].fit.items[2].estimate is None
    # The same numbers the plain run's Firth column showed.
    plain_firth = plain.read_results().question("features").alternative_fits["bias_reduced"].fit.items[2]
    assert gamma.estimate == plain_firth.estimate


def test_the_dashboard_says_the_estimates_are_bias_reduced_and_which_it_changed(staff_client, db):
    study = make_judged_study(slug="sep", abilities=NEVER_WINS, participants=40)
    study.bias_reduced = True
    study.save()
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    page = staff_client.get("/dashboard/sep/").content.decode()

    assert "Estimates are <strong>bias-reduced</strong>" in page
    gamma = run.read_results().question("features").fit.items[2].estimate
    assert f"(no finite maximum-likelihood estimate: it never won or never lost) → {gamma:.3f}" in page
    assert '<th scope="col">Maximum likelihood</th>' in page
    assert '<th scope="col">Bias-reduced (Firth)</th>' not in page


def test_without_the_setting_the_dashboard_has_no_bias_reduced_note(staff_client, db):
    study = make_judged_study(slug="sep", abilities=NEVER_WINS, participants=40)
    refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    page = staff_client.get("/dashboard/sep/").content.decode()
    assert "Estimates are <strong>bias-reduced</strong>" not in page
    assert '<th scope="col">Bias-reduced (Firth)</th>' in page


def test_the_setting_is_in_the_study_file_and_stays_editable_in_the_admin_of_a_live_study(client, researcher):
    study = make_judged_study(slug="sep", abilities=NEVER_WINS, participants=4)
    study.bias_reduced = True
    study.save()
    exported = export_study(study)
    assert exported["analysis"] == {"bias_reduced": True}
    page = client.get(f"/admin/surveys/study/{study.pk}/change/").content.decode()
    assert re.search(r'<input type="checkbox" name="bias_reduced"[^>]*checked', page)  # live, and still a box

    exported |= {"slug": "sep-copy", "status": "draft", "analysis": {"bias_reduced": False}}
    assert import_study(exported).bias_reduced is False
    exported |= {"slug": "sep-yes", "analysis": {"bias_reduced": "yes"}}
    with pytest.raises(StudyFileError) as caught:
        import_study(exported)
    assert caught.value.errors[0].startswith("analysis.bias_reduced:")
