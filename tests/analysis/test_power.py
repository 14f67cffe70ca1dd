"""Power analysis: the source study's reported figure and the behaviour around it."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from analysis import bradley_terry as bt
from analysis.power import abilities_for, power_analysis, repetitions_needed, reported_power
from analysis.power.reported import _holm_rejects

# From the source study's report (design sizes and power figure), kept as a test fixture.
REPORTED = json.loads((Path(__file__).resolve().parent.parent / "fixtures" / "bt" / "reported_power.json").read_text())


def test_it_reproduces_the_reported_856_percent_with_alpha_bonferroni_corrected_over_five_questions():
    design, reported = REPORTED["exp1"], REPORTED["power"]
    result = power_analysis(
        systems=design["systems"],
        vignettes=design["vignettes"],
        repetitions=design["repetitions"],
        gap=reported["log_odds_gap_best_vs_worst"],
        spacing="even",
        alpha=reported["alpha"],
        questions=5,
        simulations=20_000,
        seed=20250101,
    )
    # 20,000 simulations take well under a second; MC SE is about 0.0025, so allow 3 SE.
    assert abs(result.power - reported["power"]) < 3 * result.mc_se
    assert result.comparisons == design["comparisons"]
    assert result.alpha_per_test == pytest.approx(0.01)


def test_without_the_correction_the_same_design_has_far_more_power_than_reported():
    design = REPORTED["exp1"]
    result = power_analysis(
        systems=design["systems"],
        vignettes=design["vignettes"],
        repetitions=design["repetitions"],
        gap=0.4,
        simulations=5_000,
        seed=3,
    )
    assert result.power > 0.93


def test_power_grows_with_repetitions_and_the_needed_repetitions_reach_the_target():
    common = dict(systems=7, vignettes=12, gap=0.4, questions=5, simulations=4_000, seed=8)
    low = power_analysis(repetitions=4, **common).power
    high = power_analysis(repetitions=12, **common).power
    assert low < high
    needed = repetitions_needed(0.8, **common)
    assert power_analysis(repetitions=needed, **common).power >= 0.8
    assert power_analysis(repetitions=needed - 1, **common).power < 0.8


def test_a_zero_gap_rejects_at_about_the_nominal_rate():
    result = power_analysis(systems=5, vignettes=10, repetitions=8, gap=0.0, simulations=20_000, seed=4)
    assert abs(result.power - 0.05) < 4 * 0.0016  # binomial SE of 0.05 over 20,000


def test_spacings_put_the_worst_first_and_the_best_last():
    assert abilities_for(5, 0.4, "even").tolist() == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    assert abilities_for(4, 0.4, "one-best").tolist() == [0.0, 0.0, 0.0, 0.4]
    with pytest.raises(ValueError, match="spacing"):
        abilities_for(4, 0.4, "random")


def test_the_result_reports_judges_needed_and_a_repetitions_shortcut():
    result = power_analysis(systems=8, vignettes=12, repetitions=8, gap=0.4, simulations=500, seed=1)
    assert result.comparisons == REPORTED["exp2"]["comparisons"]
    assert result.participants == REPORTED["exp2"]["judges_planned"]
    assert result.repetitions_needed_for(0.8) <= 8


# ------------------------------------------------------------- the tests the analysis reports


def test_with_two_systems_the_reported_test_is_the_best_vs_worst_test():
    common = dict(vignettes=12, repetitions=8, gap=0.4, questions=5, simulations=20_000)
    reported = reported_power(systems=2, seed=1, **common)
    best_vs_worst = power_analysis(systems=2, seed=2, **common)
    assert abs(reported.power - best_vs_worst.power) < 4 * math.hypot(reported.mc_se, best_vs_worst.mc_se)
    assert reported.alpha_per_question == pytest.approx(0.01)


def test_reported_power_is_the_rejection_rate_of_the_analysis_itself():
    """Simulate judging studies, fit them as the dashboard does (Wald, Holm within the question)
    and count rejections per system: the power calculation predicts those rates."""
    truth = np.array([0.0, 0.0, 0.2, 0.4, 0.6])
    rng = np.random.default_rng(5)
    rejected = []
    for _ in range(400):
        data = bt.simulate_judgments(truth, vignettes=6, repetitions=6, rng=rng)
        result = bt.fit(data.winners, data.losers, 5, reference=0)
        rejected.append(bt.holm(result.p[1:]) <= 0.05)
    predicted = reported_power(abilities=truth, vignettes=6, repetitions=6, simulations=20_000, seed=6)
    observed = np.mean(rejected, axis=0)
    assert np.all(np.abs(observed - predicted.per_system) < 4 * np.sqrt(0.25 / 400))
    assert predicted.false_positive_rate == pytest.approx(predicted.per_system[0])  # one null system


def test_holm_within_a_question_keeps_the_family_wise_error_at_alpha_without_answer_variation():
    result = reported_power(abilities=np.zeros(6), vignettes=12, repetitions=8, simulations=20_000, seed=7)
    assert math.isnan(result.power)
    assert result.per_system == pytest.approx([result.per_system[0]] * 5, abs=0.01)
    assert 0.03 < result.false_positive_rate < 0.05 + 3 * math.sqrt(0.05 * 0.95 / 20_000)


def test_answer_variation_inflates_wald_false_positives_but_not_answer_robust_ones():
    common = dict(abilities=np.zeros(6), vignettes=12, repetitions=8, answer_sd=0.3, simulations=5_000, seed=8)
    wald = reported_power(interval="wald", **common)
    robust = reported_power(interval="answer-robust", **common)
    assert wald.false_positive_rate > 0.2
    assert robust.false_positive_rate < 0.05 + 3 * math.sqrt(0.05 * 0.95 / 5_000)


def test_answer_variation_costs_power_for_answer_robust_tests():
    common = dict(systems=7, vignettes=12, repetitions=8, gap=0.8, interval="answer-robust", simulations=4_000, seed=9)
    assert reported_power(answer_sd=0.4, **common).power < reported_power(answer_sd=0.0, **common).power - 0.1


def test_reported_power_grows_with_the_effect_and_with_repetitions():
    result = reported_power(systems=7, vignettes=12, repetitions=8, gap=0.6, simulations=4_000, seed=10)
    assert result.effects == pytest.approx([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    assert all(low <= high + 0.02 for low, high in zip(result.per_system[:-1], result.per_system[1:], strict=True))
    needed = result.repetitions_needed_for(0.8)
    again = reported_power(systems=7, vignettes=12, repetitions=needed, gap=0.6, simulations=4_000, seed=10)
    assert needed > 8
    assert again.power >= 0.8 - 3 * again.mc_se


def test_holm_rejections_in_a_batch_match_the_analysis_holm():
    p = np.random.default_rng(11).uniform(0, 0.05, size=(200, 6))
    rejects = _holm_rejects(p, 0.02)
    assert np.array_equal(rejects, np.array([bt.holm(row) <= 0.02 for row in p]))


def test_reported_power_refuses_unknown_intervals_and_negative_answer_sd():
    with pytest.raises(ValueError, match="interval must be one of"):
        reported_power(vignettes=12, repetitions=8, interval="bootstrap")
    with pytest.raises(ValueError, match="cannot be negative"):
        reported_power(vignettes=12, repetitions=8, answer_sd=-0.1)
