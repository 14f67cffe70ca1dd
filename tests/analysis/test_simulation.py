"""Simulated judging studies: each knob of the model has the effect it says, and a fit recovers it."""

import numpy as np
import pytest

from analysis import bradley_terry as bt

TRUTH = np.array([0.0, 0.4, -0.3, 0.2])


def simulate(seed=1, vignettes=20, **knobs):
    rng = np.random.default_rng(seed)
    return bt.simulate_judgments(TRUTH, vignettes=vignettes, repetitions=60, rng=rng, **knobs)


def test_the_fit_recovers_the_abilities_and_the_order_effect():
    data = simulate(order_effect=0.3)
    result = bt.fit(data.winners, data.losers, 4, reference=0, first=data.first)
    assert np.all(np.abs(result.estimates - TRUTH)[1:] < 3 * result.se[1:])  # SE about 0.033
    assert abs(result.order_effect.estimate - 0.3) < 3 * result.order_effect.se


def test_without_an_order_effect_the_first_answer_wins_half_the_time():
    data = simulate()
    assert bt.first_position_rate(data.first, data.winners) == pytest.approx(0.5, abs=0.015)


def test_answer_level_sd_shows_as_between_vignette_heterogeneity_of_about_sqrt2_tau():
    for tau in (0.0, 0.4):
        data = simulate(seed=2, vignettes=60, answer_sd=tau)
        result = bt.vignette_heterogeneity(data.winners, data.losers, 4, reference=0, vignettes=data.vignettes)
        between = np.mean([s.between_sd for s in result.systems])
        assert between == pytest.approx(np.sqrt(2) * tau, abs=0.1)
        assert (result.lr_p < 0.001) == (tau > 0)


def test_inattentive_judges_pick_at_random_and_shrink_the_estimates_as_predicted():
    share = 0.4
    data = simulate(seed=3, inattentive=share, order_effect=0.3)
    careless = np.isin(data.judges, data.inattentive_judges)
    assert careless.mean() == pytest.approx(share, abs=0.05)
    # The careless judges' picks ignore ability and position alike.
    assert bt.first_position_rate(data.first[careless], data.winners[careless]) == pytest.approx(0.5, abs=0.03)
    result = bt.fit(data.winners, data.losers, 4, reference=0, first=data.first)
    # P(i beats j) = (1 - share) expit(d) + share / 2, about logit^-1((1 - share) d) for small d:
    # the estimates shrink towards 0 by about (1 - share), as does the order effect.
    slope = result.estimates @ TRUTH / (TRUTH @ TRUTH)
    assert slope == pytest.approx(1 - share, abs=0.12)
    assert result.order_effect.estimate == pytest.approx(0.3 * (1 - share), abs=3 * result.order_effect.se)
    attentive_only = bt.fit(
        data.winners[~careless], data.losers[~careless], 4, reference=0, first=data.first[~careless]
    )
    assert np.all(np.abs(attentive_only.estimates - TRUTH)[1:] < 3 * attentive_only.se[1:])


def test_the_shared_probability_rule():
    assert bt.first_wins_probability(0.0) == 0.5
    assert bt.first_wins_probability(0.0, order_effect=np.log(3)) == pytest.approx(0.75)
    assert bt.first_wins_probability(5.0, attentive=False) == 0.5
