"""Bradley-Terry maths against BradleyTerry2's published outputs and known answers.

Published numbers live in tests/fixtures/bt/published.json (copied with their sources from
BradleyTerry2's printed output). Tolerances are half a unit in the last printed digit.
"""

import json
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from analysis import bradley_terry as bt
from analysis.bradley_terry import dense as bt_dense
from analysis.bradley_terry import fitting as bt_fitting
from analysis.comparison_files import read_comparisons

from .published import FIXTURES, PUBLISHED, fit_file


def half_unit(printed: float) -> float:
    """Half a unit in the last digit of a number as printed, e.g. 0.3339 -> 5e-5."""
    text = repr(printed)
    if "e" in text:
        mantissa, exponent = text.split("e")
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        return 0.5 * 10.0 ** (int(exponent) - decimals)
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10.0**-decimals


def check_table(result: bt.BTResult, table: dict, *, se_tolerance: float | None = None):
    for name, published in table.items():
        k = result.item_names.index(name)
        for key, ours in (("estimate", result.estimates[k]), ("se", result.se[k])):
            tolerance = se_tolerance if key == "se" and se_tolerance else half_unit(published[key])
            assert_allclose(ours, published[key], atol=tolerance, rtol=0, err_msg=f"{name} {key}")


def check_coefficients(result: bt.BTResult, coefficients: dict):
    for name, published in coefficients.items():
        if name == "at.home":
            effect = result.order_effect
            ours = dict(estimate=effect.estimate, se=effect.se, z=effect.z, p=effect.p)
        else:
            k = result.item_names.index(name)
            ours = dict(estimate=result.estimates[k], se=result.se[k], z=result.z[k], p=result.p[k])
        for key, value in published.items():
            # p is printed to 3 significant digits, the rest to fixed decimals.
            tolerance = 0.5e-2 * value if key == "p" else half_unit(value)
            assert_allclose(ours[key], value, atol=tolerance, rtol=0, err_msg=f"{name} {key}")


# ------------------------------------------------------------- published examples


def test_citations_abilities_and_standard_errors_match_bradleyterry2():
    model = PUBLISHED["citations"]["models"]["ref_Biometrika"]
    result = fit_file("citations.csv", "Biometrika")
    assert result.converged
    assert result.problems == []
    check_table(result, model["printed_abilities"]["table"])
    for name, value in model["printed_4dp"]["coefficients"].items():
        k = result.item_names.index(name)
        assert_allclose(result.estimates[k], value, atol=half_unit(value))


def test_citations_deviances_follow_rs_conventions():
    printed = PUBLISHED["citations"]["models"]["ref_Biometrika"]["printed_4dp"]
    result = fit_file("citations.csv", "Biometrika")
    assert_allclose(result.deviance, printed["residual_deviance"], atol=5e-4)
    # R's null deviance of a no-intercept GLM is the deviance at eta = 0: 1925.23.
    assert_allclose(result.null_deviance, printed["null_deviance"], atol=0.5)
    assert result.n_comparisons == 3727


def test_citations_with_jasa_as_reference_match_bradleyterry2():
    model = PUBLISHED["citations"]["models"]["ref_JASA"]
    result = fit_file("citations.csv", "JASA")
    check_table(result, model["printed_abilities"]["table"])


def test_centred_abilities_use_the_full_covariance_like_contr_sum():
    table = PUBLISHED["citations"]["models"]["sum_to_zero"]["printed_abilities"]["table"]
    result = fit_file("citations.csv", "Biometrika")
    estimates, se = bt.centred_abilities(result)
    for name, published in table.items():
        k = result.item_names.index(name)
        assert_allclose(estimates[k], published["estimate"], atol=half_unit(published["estimate"]))
        assert_allclose(se[k], published["se"], atol=half_unit(published["se"]))


def test_baseball_without_home_advantage_matches_the_printed_summary():
    model = PUBLISHED["baseball"]["models"]["no_home"]
    result = fit_file("baseball.csv", "Baltimore")
    assert result.order_effect is None
    check_coefficients(result, model["coefficients"])


def test_baseball_home_advantage_is_the_order_effect_with_bradleyterry2_coding():
    model = PUBLISHED["baseball"]["models"]["home_advantage"]
    result = fit_file("baseball.csv", "Baltimore", order=True)
    check_coefficients(result, model["coefficients"])
    abilities = model["abilities_7dp"]
    check_table(result, abilities["table"], se_tolerance=abilities["tolerance_abs_se"])
    assert_allclose(result.deviance, model["residual_deviance"], atol=5e-4)
    assert_allclose(result.null_deviance, model["null_deviance"], atol=5e-4)


def test_likelihood_ratio_for_home_advantage_matches_the_published_anova():
    drop = PUBLISHED["baseball"]["anova_deviance_drop"]["value"]
    without = fit_file("baseball.csv", "Baltimore")
    with_order = fit_file("baseball.csv", "Baltimore", order=True)
    assert_allclose(2 * (with_order.log_likelihood - without.log_likelihood), drop, atol=5e-5)


# ------------------------------------------------------------- known answers


def test_two_items_give_the_log_odds_and_its_textbook_standard_error():
    winners, losers = np.array([0, 0, 0, 1]), np.array([1, 1, 1, 0])
    result = bt.fit(winners, losers, 2, reference=1, item_names=["A", "B"])
    assert_allclose(result.estimates, [math.log(3), 0.0], atol=1e-12)
    assert_allclose(result.se[0], math.sqrt(1 / 3 + 1 / 1), atol=1e-12)
    assert_allclose(result.p[0], 2 * (1 - 0.5 * math.erfc(-result.z[0] / math.sqrt(2))), atol=1e-12)
    assert result.wins.tolist() == [3, 1]
    assert result.losses.tolist() == [1, 3]


def test_counts_give_the_same_fit_as_repeated_rows():
    winners, losers, counts = np.array([0, 1, 1, 2, 2, 0]), np.array([1, 0, 2, 1, 0, 2]), np.array([5, 2, 4, 3, 1, 6])
    grouped = bt.fit(winners, losers, 3, reference=0, counts=counts)
    expanded = bt.fit(np.repeat(winners, counts), np.repeat(losers, counts), 3, reference=0)
    assert_allclose(grouped.estimates, expanded.estimates, atol=1e-12)
    assert_allclose(grouped.se, expanded.se, atol=1e-12)
    assert_allclose(grouped.log_likelihood, expanded.log_likelihood, atol=1e-9)


def test_a_symmetric_order_effect_gives_the_first_position_log_odds():
    # A and B equally strong; whoever is shown first wins 3 of 4.
    first_wins = [(0, 1, 0)] * 3 + [(1, 0, 0)] + [(1, 0, 1)] * 3 + [(0, 1, 1)]
    winners, losers, first = (np.array(column) for column in zip(*first_wins, strict=True))
    result = bt.fit(winners, losers, 2, reference=0, first=first)
    assert_allclose(result.order_effect.estimate, math.log(3), atol=1e-10)
    assert_allclose(result.estimates[1], 0.0, atol=1e-10)
    assert bt.first_position_rate(first, winners) == 0.75


def test_a_style_covariate_is_estimated_as_a_slope_on_the_winner_minus_loser_difference():
    rng = np.random.default_rng(7)
    first, second = rng.integers(0, 4, 20_000), rng.integers(0, 4, 20_000)
    first, second = first[first != second], second[first != second]
    abilities = np.array([0.0, 0.3, -0.2, 0.5])
    # Answer length varies per comparison, so its slope is not aliased with the abilities.
    length_gap = rng.normal(scale=0.5, size=len(first))  # first minus second
    eta = abilities[first] - abilities[second] + 0.8 * length_gap
    first_wins = rng.random(len(first)) < 1 / (1 + np.exp(-eta))
    winners, losers = np.where(first_wins, first, second), np.where(first_wins, second, first)
    winner_minus_loser = np.where(first_wins, length_gap, -length_gap)
    result = bt.fit(winners, losers, 4, reference=0, covariates=winner_minus_loser[:, None])
    slope = result.covariate_effects[0]
    assert abs(slope.estimate - 0.8) < 3 * slope.se
    assert np.all(np.abs(result.estimates - abilities)[1:] < 3 * result.se[1:])


# ------------------------------------------------------------- problems in words


def test_an_item_that_never_wins_is_named_and_left_empty():
    winners = np.array([0, 1, 0, 1, 0, 1])
    losers = np.array([1, 0, 2, 2, 2, 2])
    result = bt.fit(winners, losers, 3, reference=0, item_names=["A", "B", "C"])
    assert any("'C' never wins" in problem and "minus infinity" in problem for problem in result.problems)
    assert math.isnan(result.estimates[2])
    assert math.isnan(result.se[2])
    assert np.isfinite(result.estimates[:2]).all()
    assert result.converged is False
    json.dumps(result.as_dict(), allow_nan=False)  # no nan or huge numbers leak into JSON


def test_an_item_that_never_loses_is_named():
    winners, losers = np.array([0, 1, 2, 2]), np.array([1, 0, 0, 1])
    result = bt.fit(winners, losers, 3, reference=0, item_names=["A", "B", "C"])
    assert any("'C' never loses" in problem and "plus infinity" in problem for problem in result.problems)
    assert math.isnan(result.estimates[2])


def test_a_disconnected_comparison_graph_names_its_components():
    winners, losers = np.array([0, 1, 2, 3]), np.array([1, 0, 3, 2])
    names = ["A", "B", "C", "D"]
    result = bt.fit(winners, losers, 4, reference=0, item_names=names)
    message = next(problem for problem in result.problems if "disconnected" in problem)
    assert "{'A', 'B'}" in message
    assert "{'C', 'D'}" in message
    assert np.isnan(result.estimates[2:]).all()
    assert result.estimates[1] == pytest.approx(0.0)
    assert result.converged is False


def test_an_order_effect_with_perfect_separation_is_reported_not_printed_as_a_huge_number():
    winners, losers, first = np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0]), np.array([0, 1, 0, 1])
    result = bt.fit(winners, losers, 2, reference=0, first=first)
    assert any("'order' diverges" in problem for problem in result.problems)
    assert math.isnan(result.order_effect.estimate)
    assert result.converged is False


def test_an_item_without_comparisons_is_reported():
    result = bt.fit(np.array([0, 1]), np.array([1, 0]), 3, reference=0, item_names=["A", "B", "C"])
    assert any("'C' has no comparisons" in problem for problem in result.problems)


# ------------------------------------------------------------- simulation


def test_intervals_cover_the_true_abilities_about_95_percent_of_the_time():
    rng = np.random.default_rng(2024)
    truth = np.array([0.0, 0.2, -0.3, 0.5, 0.1, -0.1])
    first, second = np.triu_indices(6, k=1)
    first, second = np.repeat(first, 60), np.repeat(second, 60)
    covered, errors = [], []
    for _ in range(400):
        winners, losers = bt.simulate(truth, first, second, rng)
        result = bt.fit(winners, losers, 6, reference=0)
        covered.append((result.ci_low[1:] <= truth[1:]) & (truth[1:] <= result.ci_high[1:]))
        errors.append(result.estimates[1:] - truth[1:])
    coverage = np.mean(covered)
    # 2,000 interval checks (correlated within a fit): 0.95 +/- about 3 standard errors.
    assert 0.93 <= coverage <= 0.97
    assert np.all(np.abs(np.mean(errors, axis=0)) < 0.02)  # ML bias is small here


def test_simulate_uses_the_order_effect_for_the_item_shown_first():
    rng = np.random.default_rng(3)
    first, second = np.zeros(20_000, int), np.ones(20_000, int)
    winners, _ = bt.simulate(np.zeros(2), first, second, rng, order_effect=math.log(3))
    assert abs(np.mean(winners == 0) - 0.75) < 0.01


# ------------------------------------------------------------- bootstrap and reliability


def study_like_data(rng, abilities, per_pair=96, per_participant=5):
    first, second = np.triu_indices(len(abilities), k=1)
    first, second = np.repeat(first, per_pair), np.repeat(second, per_pair)
    shuffled = rng.permutation(len(first))
    first, second = first[shuffled], second[shuffled]
    winners, losers = bt.simulate(abilities, first, second, rng)
    clusters = np.arange(len(first)) // per_participant
    return winners, losers, clusters


def test_bootstrap_percentile_intervals_agree_with_wald_intervals_for_independent_judges():
    rng = np.random.default_rng(11)
    abilities = np.linspace(0, 0.6, 8)
    winners, losers, clusters = study_like_data(rng, abilities)
    result = bt.fit(winners, losers, 8, reference=0)
    boot = bt.bootstrap(winners, losers, 8, reference=0, clusters=clusters, n_boot=1000, rng=rng)
    assert boot.n_failed == 0
    assert_allclose(boot.ci_low, result.ci_low, atol=0.05)
    assert_allclose(boot.ci_high, result.ci_high, atol=0.05)
    assert_allclose(boot.se[1:], result.se[1:], rtol=0.12)


def test_bootstrap_draws_participants_in_a_reproducible_documented_way():
    rng = np.random.default_rng(5)
    winners, losers, clusters = study_like_data(rng, np.zeros(4), per_pair=20)
    boot = bt.bootstrap(winners, losers, 4, reference=0, clusters=clusters, n_boot=3, rng=np.random.default_rng(9))
    draws = np.random.default_rng(9).integers(0, clusters.max() + 1, size=(3, clusters.max() + 1))
    picked = np.concatenate([np.flatnonzero(clusters == c) for c in draws[1]])
    refit = bt.fit(winners[picked], losers[picked], 4, reference=0)
    assert_allclose(boot.estimates[1], refit.estimates, atol=1e-8)


def test_holm_matches_a_hand_computed_example():
    # sorted p: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 -> max(0.06, 0.04) = 0.06
    adjusted = bt.holm(np.array([0.01, 0.04, 0.03, 0.005, np.nan]))
    assert_allclose(adjusted[:4], [0.03, 0.06, 0.06, 0.02], atol=1e-15)
    assert math.isnan(adjusted[4])
    assert_allclose(bt.holm(np.array([0.5, 0.9])), [1.0, 1.0])


def test_reliabilities_are_high_for_well_separated_items_and_low_without_differences():
    rng = np.random.default_rng(21)
    spread = np.linspace(0, 2.0, 8)
    winners, losers, clusters = study_like_data(rng, spread)
    result = bt.fit(winners, losers, 8, reference=0)
    assert bt.separation_reliability(result) > 0.95
    assert bt.split_half_reliability(winners, losers, clusters, 8, 0, rng, n_splits=20) > 0.95
    winners, losers, clusters = study_like_data(rng, np.zeros(8))
    assert bt.separation_reliability(bt.fit(winners, losers, 8, reference=0)) < 0.5


# ------------------------------------------------------------- dense shortcut against the general path


def general_fit(winners, losers, n_items, reference, *, counts=None, item_names=None) -> bt.BTResult:
    """The binomial-row path that fit() uses for order effects and covariates, forced."""
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    names = list(item_names) if item_names is not None else [str(k) for k in range(n_items)]
    counts = None if counts is None else np.asarray(counts, float)
    data = bt_fitting.FitData(winners, losers, n_items, reference, names, counts=counts)
    return bt_fitting._fit_general(data, max_iter=100, tol=1e-10)


def assert_same_fit(dense: bt.BTResult, general: bt.BTResult, tolerance=1e-9):
    for key in ("estimates", "se", "z", "p", "ci_low", "ci_high", "wins", "losses", "covariance"):
        assert_allclose(getattr(dense, key), getattr(general, key), atol=tolerance, rtol=0, err_msg=key)
    for key in ("log_likelihood", "deviance", "null_deviance"):
        assert_allclose(getattr(dense, key), getattr(general, key), atol=0, rtol=tolerance, err_msg=key)
    assert dense.problems == general.problems
    assert dense.converged == general.converged
    assert dense.n_comparisons == general.n_comparisons
    assert dense.order_effect is None
    assert general.order_effect is None
    assert dense.covariate_effects is None
    assert general.covariate_effects is None
    first, second = dense.as_dict(), general.as_dict()
    assert first.keys() == second.keys()
    for key in ("reference", "n_comparisons", "converged", "order_effect", "covariate_effects", "problems"):
        assert first[key] == second[key], key
    for ours, theirs in zip(first["items"], second["items"], strict=True):
        assert ours.keys() == theirs.keys()
        for key, value in ours.items():
            if isinstance(value, float):
                assert_allclose(value, theirs[key], atol=tolerance, rtol=0, err_msg=key)
            else:
                assert value == theirs[key], key


def test_plain_fits_take_the_dense_path(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the general path was used")

    monkeypatch.setattr(bt_fitting, "_fit_general", refuse)
    result = bt.fit(np.array([0, 1, 1, 2, 2, 0]), np.array([1, 0, 2, 1, 0, 2]), 3, reference=0)
    assert result.converged


def test_dense_path_agrees_with_the_general_path_on_random_data():
    rng = np.random.default_rng(99)
    n_items = 30
    abilities = rng.normal(0, 1, n_items)
    first = rng.integers(0, n_items, 20_000)
    second = (first + rng.integers(1, n_items, len(first))) % n_items
    winners, losers = bt.simulate(abilities, first, second, rng)
    for reference in (0, 17):
        dense = bt.fit(winners, losers, n_items, reference=reference)
        assert dense.converged
        assert dense.problems == []
        assert_same_fit(dense, general_fit(winners, losers, n_items, reference))
    counts = rng.integers(1, 5, len(winners))
    dense = bt.fit(winners, losers, n_items, reference=3, counts=counts)
    assert_same_fit(dense, general_fit(winners, losers, n_items, 3, counts=counts))


def test_dense_path_agrees_with_the_general_path_on_the_citations_fixture():
    data = read_comparisons(FIXTURES / "citations.csv", first_column="home")
    for reference in ("Biometrika", "JASA"):
        args = (data.winners, data.losers, len(data.item_names), data.index_of(reference))
        dense = bt.fit(*args[:3], reference=args[3], counts=data.counts, item_names=data.item_names)
        assert_same_fit(dense, general_fit(*args, counts=data.counts, item_names=data.item_names))


@pytest.mark.parametrize(
    ("winners", "losers", "n_items"),
    [
        ([0, 1, 0, 1, 0, 1], [1, 0, 2, 2, 2, 2], 3),  # C never wins
        ([0, 1, 2, 2], [1, 0, 0, 1], 3),  # C never loses
        ([0, 1, 2, 3], [1, 0, 3, 2], 4),  # two components
        ([0, 1], [1, 0], 3),  # C has no comparisons
        ([1, 2, 2, 1], [2, 1, 1, 2], 3),  # the reference has no comparisons
        ([0, 1, 2, 0, 3, 4, 3], [1, 2, 0, 3, 4, 3, 4], 5),  # a cycle that never loses to the rest
    ],
)
def test_dense_path_reports_the_same_problems_as_the_general_path(winners, losers, n_items):
    winners, losers = np.array(winners), np.array(losers)
    assert_same_fit(bt.fit(winners, losers, n_items, reference=0), general_fit(winners, losers, n_items, 0))


def test_bad_indices_are_refused_on_both_paths():
    for first in (None, np.array([0, 1])):
        for winners in ([0, 3], [0, -1]):
            with pytest.raises(ValueError, match="item indices"):
                bt.fit(np.array(winners), np.array([1, 0]), 3, reference=0, first=first)
        with pytest.raises(ValueError, match="compared with itself"):
            bt.fit(np.array([0, 1]), np.array([0, 0]), 3, reference=0, first=first)


def test_dense_path_overflow_safe_form_gives_the_same_fit(monkeypatch):
    data = read_comparisons(FIXTURES / "citations.csv", first_column="home")
    args = (data.winners, data.losers, len(data.item_names))
    usual = bt.fit(*args, reference=0, counts=data.counts)
    monkeypatch.setattr(bt_dense, "WIDE", -1.0)  # every evaluation takes the logistic form
    assert_same_fit(bt.fit(*args, reference=0, counts=data.counts), usual, tolerance=1e-12)
