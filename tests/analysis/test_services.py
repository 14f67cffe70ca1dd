"""refit_study: valid judgments of a study in, an AnalysisRun snapshot out."""

import numpy as np
import pytest

from analysis.models import AnalysisRun
from analysis.results import CURRENT_VERSION
from analysis.services import json_safe, read_study_data, refit_study, study_progress
from surveys.models import Answer, Cell, Judgment, Participant
from surveys.services.lifecycle import go_live

from ..conftest import fabricate_judgments, make_judged_study, make_study

ABILITIES = {"alpha": 0.0, "beta": 0.8, "gamma": -0.6}
FAST = {"bootstrap": 100, "split_halves": 20}


@pytest.fixture
def judged(db):
    return make_judged_study(abilities=ABILITIES, participants=150, seed=7)


def test_the_refit_stores_a_run_whose_estimates_recover_the_known_abilities(judged):
    run = refit_study(study=judged, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    assert run.status == AnalysisRun.Status.DONE, run.error
    assert run.n_judgments == 150 * 3 * 5
    assert run.n_participants == 150
    assert set(run.results) == {"features", "weighting", "reasons", "conclusion", "additional_info"}
    for result in run.results.values():
        items = {item["item"]: item for item in result["fit"]["items"]}
        assert items["alpha"]["estimate"] == 0.0
        for key in ("beta", "gamma"):
            error = abs(items[key]["estimate"] - ABILITIES[key])
            assert error < 3.5 * items[key]["se"], (key, items[key])
    pooled = np.mean([[i["estimate"] for i in r["fit"]["items"]] for r in run.results.values()], axis=0)
    np.testing.assert_allclose(pooled, [0.0, 0.8, -0.6], atol=0.15)


def test_the_run_keeps_parameters_snapshot_hash_and_revision(judged):
    run = refit_study(study=judged, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST | {"seed": 3})
    assert run.parameters["reference"] == "alpha"
    assert run.parameters["seed"] == 3
    assert run.parameters["bootstrap"] == 100
    assert run.parameters["order_effect"] is False
    assert len(run.data_hash) == 64
    assert run.git_revision
    assert [s["key"] for s in run.systems] == ["alpha", "beta", "gamma"]
    assert run.finished_at is not None


def test_each_question_carries_diagnostics_bootstrap_holm_style_and_vignettes(judged):
    run = refit_study(study=judged, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    assert run.schema_version == CURRENT_VERSION
    result = run.read_results().question("features")
    assert len(result.holm_p) == 3
    assert result.holm_p[0] is None
    assert result.stars[0] == ""
    boot = result.intervals["bootstrap"]
    assert boot.details["n_boot"] == 100
    assert len(boot.ci_low) == 3
    assert boot.label == "Bootstrap CI"
    assert boot.answers.startswith("Judges:")
    beta_low, beta_high = boot.ci_low[1], boot.ci_high[1]
    assert beta_low < result.fit.items[1].estimate < beta_high
    assert result.order_effect.name == "order"
    assert 0.0 < result.first_position_rate < 1.0
    assert result.separation_reliability is not None
    assert result.split_half_reliability is not None
    styled = result.alternative_fits["style_controlled"]
    assert styled.fit is None
    assert styled.problems == ["No length differences to control for."]
    assert sorted(v.vignette for v in result.by_vignette) == ["v1", "v2", "v3"]
    assert sum(v.n_judgments for v in result.by_vignette) == result.n_judgments
    halo = run.read_results().halo
    assert halo.questions[0] == "features"
    assert len(halo.matrix) == 5
    assert halo.matrix[0][0] == pytest.approx(1.0)


def test_excluded_returned_and_preview_participants_are_left_out(judged):
    before = refit_study(study=judged, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    flipped = {"alpha": 5.0, "beta": -5.0, "gamma": -5.0}
    fabricate_judgments(judged, flipped, participants=20, pid_prefix="X", exclusion="straight-lining")
    fabricate_judgments(judged, flipped, participants=5, pid_prefix="Q", is_preview=True)
    fabricate_judgments(judged, flipped, participants=5, pid_prefix="R", status=Participant.Status.RETURNED)
    assert Judgment.objects.count() > before.n_judgments
    after = refit_study(study=judged, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    assert after.n_judgments == before.n_judgments
    assert after.data_hash == before.data_hash
    assert after.results["features"]["fit"] == before.results["features"]["fit"]


def test_a_changed_pick_changes_the_data_hash(judged):
    before = refit_study(study=judged, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    judgment = Judgment.objects.valid().first()
    Judgment.objects.filter(pk=judgment.pk).update(
        winner=judgment.loser,
        loser=judgment.winner,
        winner_position="second" if judgment.winner_position == "first" else "first",
    )
    after = refit_study(study=judged, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    assert after.data_hash != before.data_hash
    assert after.n_judgments == before.n_judgments


def test_shown_first_and_style_difference_follow_each_judgment(judged):
    data = read_study_data(study=judged)
    features = data.questions[0]
    judgment = Judgment.objects.valid().filter(question__key="features").order_by("id").first()
    index = {s["key"]: k for k, s in enumerate(data.systems)}
    assert features.winners[0] == index[judgment.winner.system.key]
    shown_first = judgment.assignment.first_answer.system.key
    assert features.first[0] == index[shown_first]
    assert features.style[0] == judgment.winner.word_count() - judgment.loser.word_count()


def test_a_study_without_judgments_gets_a_run_that_says_so(db):
    study = make_study(slug="empty")
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND)
    assert run.status == AnalysisRun.Status.DONE
    assert run.n_judgments == 0
    assert run.results["features"]["fit"] is None
    assert run.results["features"]["problems"] == ["No valid judgments on this question yet."]


def test_a_study_without_reference_is_stored_as_a_failed_run_with_the_reason(db):
    study = make_study(slug="noref", reference="nobody")
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND)
    assert run.status == AnalysisRun.Status.FAILED
    assert "no reference system" in run.error
    assert AnalysisRun.objects.latest_for(study) is None


def test_a_system_that_never_wins_is_reported_in_words_not_huge_numbers(db):
    study = make_judged_study(slug="sep", abilities={"alpha": 0.0, "beta": 0.5, "gamma": -40.0}, participants=40)
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    result = run.results["features"]
    gamma = result["fit"]["items"][2]
    assert gamma["estimate"] is None
    assert any("'gamma' never wins" in problem for problem in result["problems"])


def test_progress_counts_cells_participants_exclusions_and_median_minutes(judged):
    Cell.objects.filter(study=judged).update(completed=2, reserved=1)
    fabricate_judgments(judged, ABILITIES, participants=3, pid_prefix="X", exclusion="too-fast")
    fabricate_judgments(judged, ABILITIES, participants=2, pid_prefix="Q", is_preview=True)
    progress = study_progress(study=judged)
    cells = judged.cells.count()
    assert progress["cells"] == cells
    assert progress["target"] == cells * judged.repetitions
    assert progress["completed"] == 2 * cells
    assert progress["reserved"] == cells
    assert progress["participants"] == 153
    assert progress["valid_participants"] == 150
    assert progress["exclusions"] == [{"reason": "too-fast", "label": "Exceptionally fast", "count": 3}]
    assert 4 <= progress["median_minutes"] <= 25
    assert progress["median_minutes_start_to_finish"] == pytest.approx(progress["median_minutes"] + 3, abs=1.5)


def test_json_safe_turns_nan_and_numpy_into_plain_json():
    assert json_safe({"a": np.float64("nan"), "b": np.array([1.0, np.inf]), "c": np.int64(2)}) == {
        "a": None,
        "b": [1.0, None],
        "c": 2,
    }


def test_style_control_estimates_a_length_effect_beside_the_abilities(db):
    study = make_study(slug="style", systems=("alpha", "beta", "gamma"), vignettes_per_participant=3)
    rng = np.random.default_rng(4)
    for answer in Answer.objects.for_study(study):
        answer.action = " ".join(["word"] * int(rng.integers(5, 300)))
        answer.save(update_fields=["action"])
    study = go_live(study=study)
    fabricate_judgments(study, ABILITIES, participants=150, seed=8)
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    result = run.read_results().question("features")
    styled = result.alternative_fits["style_controlled"].fit
    effect = styled.covariate_effects[0]
    assert effect.name == "covariate 0"
    assert abs(effect.estimate) < 3 * effect.se
    plain = [item.estimate for item in result.fit.items]
    controlled = [item.estimate for item in styled.items]
    np.testing.assert_allclose(controlled, plain, atol=0.25)
    assert run.parameters["style_per_words"] == 100
