"""Bias-reduced (Firth) fits: BradleyTerry2's published br = TRUE example, known answers, and real R."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from analysis import bradley_terry as bt
from analysis.comparison_files import read_comparisons

from .published import FIXTURES, PUBLISHED, fit_file
from .rscript import run_r


def test_flatlizards_bias_reduced_fit_matches_the_published_summary():
    model = PUBLISHED["flatlizards"]["models"]["unstructured_bias_reduced"]
    result = fit_file("flatlizards_contests.csv", model["reference"], bias_reduced=True)
    unlinked = {effect.name.split(" - ")[0]: effect for effect in result.unlinked}
    assert len(unlinked) == 4  # {011, 060}, {024, 053}, {026, 047, 058}: R holds the last of each at 0
    for name, published in model["coefficients"].items():
        k = result.item_names.index(name)
        if published is None:  # aliased in R: the anchor of its component
            assert math.isnan(result.estimates[k])
            assert name not in unlinked
            continue
        if name in unlinked:
            effect = unlinked[name]
            ours = dict(estimate=effect.estimate, se=effect.se, z=effect.z, p=effect.p)
        else:
            ours = dict(estimate=result.estimates[k], se=result.se[k], z=result.z[k], p=result.p[k])
        for key in ("estimate", "se"):
            assert_allclose(ours[key], published[key], atol=model["tolerance_abs"], err_msg=f"{name} {key}")
        for key in ("z", "p"):  # printed to two decimals; R stops about 1e-4 short of the root here
            assert_allclose(ours[key], published[key], atol=0.005 + model["tolerance_abs"], err_msg=f"{name} {key}")
    assert_allclose(result.deviance, model["residual_deviance"], atol=5e-4)
    assert result.bias_reduced


def test_maximum_likelihood_leaves_flatlizards_empty_where_bias_reduction_does_not():
    plain = fit_file("flatlizards_contests.csv", "lizard003", bias_reduced=False)
    reduced = fit_file("flatlizards_contests.csv", "lizard003", bias_reduced=True)
    assert np.isfinite(plain.estimates).sum() == 1  # only the reference itself
    assert np.isfinite(reduced.estimates).sum() == 70
    note = next(problem for problem in reduced.problems if problem.startswith("Bias reduction"))
    assert "'lizard180'" in note
    assert "infinite" in note


def test_a_single_win_gives_the_firth_log_odds_of_one_and_a_half_to_a_half():
    result = bt.fit(np.array([0]), np.array([1]), 2, reference=1, bias_reduced=True, item_names=["A", "B"])
    # Firth adds half an observation to each side of a lone binomial: logit(1.5 / 2).
    assert_allclose(result.estimates[0], math.log(3), atol=1e-10)
    assert_allclose(result.se[0], 1 / math.sqrt(0.75 * 0.25), atol=1e-9)  # Fisher information at p = 3/4
    assert result.converged
    assert len(result.problems) == 1
    assert "'A'" in result.problems[0]


def test_an_item_that_never_wins_gets_a_finite_estimate_below_the_others():
    winners = np.array([0, 1, 0, 1, 0, 1, 0, 1])
    losers = np.array([1, 0, 2, 2, 2, 2, 1, 0])
    result = bt.fit(winners, losers, 3, reference=0, bias_reduced=True, item_names=["A", "B", "C"])
    assert result.converged
    assert np.isfinite(result.estimates).all()
    assert result.estimates[2] < -1.0
    assert any("'C'" in problem and "infinite" in problem for problem in result.problems)


def test_bias_reduction_shrinks_a_well_determined_fit_only_slightly():
    reduced = fit_file("citations.csv", "Biometrika", bias_reduced=True)
    published = PUBLISHED["citations"]["models"]["ref_Biometrika"]["bias_reduced_printed"]
    for name, value in published["coefficients"].items():
        assert_allclose(reduced.estimates[reduced.item_names.index(name)], value, atol=5e-5, err_msg=name)
    assert_allclose(reduced.deviance, published["deviance"], atol=5e-5)


# ------------------------------------------------------------- against real R

BASEBALL_R = """
library(BradleyTerry2)
games <- read.csv("games.csv")
lv <- sort(unique(c(games$home, games$away)))
games$home.team <- data.frame(team = factor(games$home, levels = lv), at.home = 1)
games$away.team <- data.frame(team = factor(games$away, levels = lv), at.home = 0)
fit <- BTm(home_won, home.team, away.team, formula = ~ team + at.home, id = "team",
           data = games, br = TRUE)
cf <- coef(summary(fit))
write.csv(data.frame(name = sub("^team", "", rownames(cf)), estimate = cf[, 1], se = cf[, 2], p = cf[, 4]),
          "out_coefficients.csv", row.names = FALSE)
"""


@pytest.mark.r
def test_bias_reduced_home_advantage_fit_equals_r_on_baseball(tmp_path):
    data = read_comparisons(FIXTURES / "baseball.csv", first_column="home")
    names, counts = data.item_names, data.counts.astype(int)
    home = np.repeat(data.first, counts)
    winners, losers = np.repeat(data.winners, counts), np.repeat(data.losers, counts)
    away = np.where(home == winners, losers, winners)
    games = {"home": [names[k] for k in home], "away": [names[k] for k in away], "home_won": list(home == winners)}
    games["home_won"] = [int(won) for won in games["home_won"]]
    r = run_r(BASEBALL_R, {"games": games}, tmp_path)["coefficients"]
    ours = fit_file("baseball.csv", "Baltimore", order=True, bias_reduced=True)
    for name, estimate, se, p in zip(r["name"], r["estimate"], r["se"], r["p"], strict=True):
        if name == "at.home":
            values = (ours.order_effect.estimate, ours.order_effect.se, ours.order_effect.p)
        else:
            k = names.index(name)
            values = (ours.estimates[k], ours.se[k], ours.p[k])
        assert_allclose(values, (estimate, se, p), atol=1e-6, err_msg=name)


SEPARATED_R = """
library(BradleyTerry2)
d <- read.csv("comparisons.csv")
lv <- c("A", "B", "C", "D", "E")
d$winner <- factor(d$winner, levels = lv)
d$loser <- factor(d$loser, levels = lv)
fit <- BTm(rep(1, nrow(d)), winner, loser, data = d, br = TRUE)
cf <- coef(summary(fit))
write.csv(data.frame(name = sub("^\\\\.\\\\.", "", rownames(cf)), estimate = cf[, 1], se = cf[, 2]),
          "out_coefficients.csv", row.names = FALSE)
"""


@pytest.mark.r
def test_bias_reduced_fit_with_an_item_that_never_wins_equals_r(tmp_path):
    rng = np.random.default_rng(4)
    first, second = np.triu_indices(4, k=1)
    winners, losers = bt.simulate(np.array([0.0, 0.5, -0.3, 0.8]), np.repeat(first, 6), np.repeat(second, 6), rng)
    # E loses all of its six comparisons.
    winners, losers = np.r_[winners, [0, 1, 2, 3, 0, 1]], np.r_[losers, [4] * 6]
    names = ["A", "B", "C", "D", "E"]
    table = {"winner": [names[k] for k in winners], "loser": [names[k] for k in losers]}
    r = run_r(SEPARATED_R, {"comparisons": table}, tmp_path)["coefficients"]
    ours = bt.fit(winners, losers, 5, reference=0, bias_reduced=True, item_names=names)
    for name, estimate, se in zip(r["name"], r["estimate"], r["se"], strict=True):
        k = names.index(name)
        assert_allclose((ours.estimates[k], ours.se[k]), (estimate, se), atol=1e-6, err_msg=name)
