"""Power analysis: the source study's reported figure and the behaviour around it."""

import json
from pathlib import Path

import pytest

from analysis.power import abilities_for, power_analysis, repetitions_needed

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
