"""The power of the dashboard's own test: simulated studies, the test run on each, resumable tallies, levers."""

import math

import numpy as np
import pytest

from analysis import bradley_terry as bt
from analysis.power.levers import _smallest, lever_values, plan_levers
from analysis.power.reported_test import Design, Tally, reported_p, simulate, simulate_batch

SMALL = dict(systems=3, gap=1.5, vignettes=4, repetitions=3, pairs_per_judge=3)


def test_a_study_with_fewer_than_three_vignettes_gets_no_test_and_rejects_nothing():
    design = Design.of(**{**SMALL, "vignettes": 2})
    study = bt.simulate_judgments(
        np.asarray(design.abilities), vignettes=2, repetitions=3, rng=np.random.default_rng(1)
    )
    assert reported_p(study, 3).holm_p is None
    result = simulate(design, simulations=20, seed=1)
    assert result.power == 0.0
    assert result.untested == 1.0


def test_the_test_is_the_dashboards_headline_test_with_holm():
    design = Design.of(**SMALL)
    rng = np.random.default_rng(2)
    study = bt.simulate_judgments(np.asarray(design.abilities), vignettes=4, repetitions=3, rng=rng)
    outcome = reported_p(study, 3)
    headline = bt.headline_test(
        study.winners, study.losers, 3, reference=0, judges=study.judges, vignettes=study.vignettes
    )
    assert outcome.df == pytest.approx(np.mean(headline.df[1:]))
    np.testing.assert_allclose(outcome.holm_p, bt.holm(headline.p))


def test_a_resumed_simulation_gives_the_same_figures_as_one_run_through():
    design = Design.of(**SMALL, answer_sd=0.3, order_effect=0.2)
    whole = simulate(design, simulations=120, seed=7)
    saved: list[dict] = []
    simulate(design, simulations=50, seed=7, after_batch=lambda tally: saved.append(tally.as_dict()))
    resumed = simulate(design, simulations=120, seed=7, tally=Tally.from_dict(saved[-1]))
    assert resumed == whole
    assert simulate_batch(design, seed=7, batch=0, size=50).as_dict() == saved[0]


def test_power_rises_with_the_effect_and_true_nulls_are_rarely_rejected():
    null = simulate(Design.of(**{**SMALL, "gap": 0.0}), simulations=60, seed=3)
    assert math.isnan(null.power)
    assert null.false_positive_rate is not None
    assert null.false_positive_rate < 0.15
    weak = simulate(Design.of(**{**SMALL, "gap": 0.3}), simulations=60, seed=3)
    strong = simulate(Design.of(**{**SMALL, "gap": 3.0}), simulations=60, seed=3)
    assert weak.power < strong.power


def test_the_design_counts_its_judges_and_refuses_impossible_ones():
    design = Design.of(systems=7, gap=0.4, vignettes=12, repetitions=8, pairs_per_judge=5)
    assert (design.judgments, design.judges) == (2016, 404)
    with pytest.raises(ValueError, match="two systems"):
        Design.of(systems=1, vignettes=3, repetitions=1)
    with pytest.raises(ValueError, match="cannot be negative"):
        Design.of(**SMALL, answer_sd=-1)


def test_the_levers_say_when_more_judges_cannot_help_and_never_leave_a_need_without_a_reason():
    design = Design.of(**{**SMALL, "gap": 0.2}, answer_sd=1.5)
    levers = plan_levers(design, simulations=10, seed=1)
    assert [point.vignettes for point in levers.more_vignettes] == [3, 4, 8, 16]
    assert [point.repetitions for point in levers.more_judges] == [2, 3, 6, 12, 24]
    assert [point.planned for point in levers.more_judges] == [False, True, False, False, False]
    assert levers.repetitions_needed is None
    assert levers.why_no_repetitions.startswith("more judges cannot reach 80% at 4 vignettes")
    assert "add vignettes" in levers.advice
    assert (levers.vignettes_needed is None) == bool(levers.why_no_vignettes)


def test_the_lever_search_finds_the_smallest_value_that_reaches():
    assert _smallest(lambda v: v >= 37, 3, 200) == 37
    assert _smallest(lambda v: v >= 3, 3, 200) == 3
    assert _smallest(lambda v: False, 3, 200) is None
    assert lever_values(12, (0.5, 1, 2, 4), smallest=3, largest=200) == [6, 12, 24, 48]
