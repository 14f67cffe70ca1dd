"""Power with an LLM judge (PPI++): the saving as a function of agreement, and the formula against simulated PPI."""

import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from scipy.special import expit

from analysis.power.judge import (
    effective_human_judgments,
    human_judgments_needed,
    judge_assisted_power,
    judge_correlation,
    variance_factor,
)
from llm_judging import ppi

DESIGN = dict(systems=7, vignettes=12, repetitions=8, gap=0.4, simulations=2_000, seed=1)


def test_a_judge_at_chance_or_against_the_humans_saves_nothing():
    assert judge_correlation(judge_agreement=0.5, human_agreement=0.9) == 0
    assert judge_correlation(judge_agreement=0.3, human_agreement=0.9) == 0  # PPI++ clips lambda at 0
    assert judge_correlation(judge_agreement=0.9, human_agreement=0.5) == 0  # nothing within a pair to predict
    assert effective_human_judgments(n_human=1000, llm_cells=50_000, rho=0.0) == 1000
    assert human_judgments_needed(n_alone=1000, llm_cells=50_000, rho=0.0) == pytest.approx(1000)


def test_the_judgments_needed_beside_the_judge_are_worth_the_judgments_needed_alone():
    for rho, cells in ((0.3, 500), (0.6, 20_000), (0.9, 100_000)):
        needed = human_judgments_needed(n_alone=2000, llm_cells=cells, rho=rho)
        assert needed < 2000
        assert effective_human_judgments(n_human=needed, llm_cells=cells, rho=rho) == pytest.approx(2000)


def test_judging_only_the_human_cells_saves_at_most_one_in_repetitions_plus_one():
    # N = cells, n = 8 x cells: the variance can shrink by rho^2 / 9 at most.
    assert variance_factor(rho=1.0, n_human=8 * 252, llm_cells=252) == pytest.approx(1 - 1 / 9)


def test_more_agreement_means_fewer_human_judges():
    needed = {}
    for agreement in (0.5, 0.7, 0.85, 0.95):
        result = judge_assisted_power(judge_agreement=agreement, human_agreement=0.85, llm_cells=20_000, **DESIGN)
        needed[agreement] = result.participants_needed_with_judge
        assert result.participants_needed_alone == needed[0.5]
    assert needed[0.5] > needed[0.7] > needed[0.85] > needed[0.95]
    assert needed[0.95] < 0.8 * needed[0.5]


def test_the_judge_raises_the_power_of_the_design_itself():
    plain = judge_assisted_power(judge_agreement=0.5, llm_cells=20_000, **DESIGN)
    strong = judge_assisted_power(judge_agreement=0.95, human_agreement=0.9, llm_cells=20_000, **DESIGN)
    assert plain.with_judge_power == pytest.approx(plain.without.power)
    assert plain.worth_human_judgments == plain.human_judgments == 2016
    assert strong.worth_human_judgments > 1.5 * strong.human_judgments
    assert strong.with_judge_power > strong.without.power + 5 * strong.without.mc_se


def simulated_ppi(rng, *, truth, n, cells, human_agreement, judge_agreement):
    """One data set from the two-point model: n human picks on distinct cells, the judge on all `cells`."""
    k = len(truth)
    first = rng.integers(0, k, cells)
    second = (first + rng.integers(1, k, cells)) % k
    # The cell's majority side is answer_a with the probability that keeps the pair's Bradley-Terry odds.
    side_a = rng.random(cells) < (expit(truth[first] - truth[second]) - (1 - human_agreement)) / (
        2 * human_agreement - 1
    )
    judge = np.where(side_a, rng.random(cells) < judge_agreement, rng.random(cells) >= judge_agreement)
    human = np.where(side_a[:n], rng.random(n) < human_agreement, rng.random(n) >= human_agreement)
    X = ppi.design(first, second, k, 0)
    y, yhat = human.astype(float), judge.astype(float)
    return ppi.ppi_logistic(X[:n], y, yhat[:n], X, yhat), ppi.classical_logistic(X[:n], y)


@pytest.mark.parametrize(
    ("human_agreement", "judge_agreement", "n", "cells"),
    [(0.8, 0.85, 600, 3000), (0.9, 0.95, 600, 6000), (0.8, 0.5, 600, 3000)],
)
def test_the_predicted_width_matches_simulated_ppi_intervals(human_agreement, judge_agreement, n, cells):
    rng = np.random.default_rng(12)
    truth = np.array([0.0, 0.2, 0.4])
    ratios, ppi_estimates, human_estimates = [], [], []
    for _ in range(200):
        calibrated, human = simulated_ppi(
            rng, truth=truth, n=n, cells=cells, human_agreement=human_agreement, judge_agreement=judge_agreement
        )
        ratios.append(calibrated.se / human.se)
        ppi_estimates.append(calibrated.estimate)
        human_estimates.append(human.estimate)
    rho = judge_correlation(judge_agreement=judge_agreement, human_agreement=human_agreement)
    predicted = np.sqrt(variance_factor(rho=rho, n_human=n, llm_cells=cells))
    # ppi.py's own interval width, relative to the humans' alone, is the predicted one.
    assert np.mean(ratios, axis=0) == pytest.approx([predicted, predicted], abs=0.015)
    # And so is the spread of the estimates across data sets (200 replications: about 5% noise per ratio).
    spread = np.std(ppi_estimates, axis=0) / np.std(human_estimates, axis=0)
    assert spread == pytest.approx([predicted, predicted], abs=0.12)
    assert np.mean(ppi_estimates, axis=0) == pytest.approx(truth[1:], abs=0.05)  # still unbiased


def run_power(*args) -> dict:
    from io import StringIO

    out = StringIO()
    call_command("power", *args, "--simulations", "1000", "--seed", "3", "--json", stdout=out)
    return json.loads(out.getvalue())


def test_the_power_command_shows_fewer_humans_with_more_agreement_and_none_saved_at_chance():
    chance = run_power("--judge-agreement", "0.5", "--llm-cells", "30000")
    good = run_power("--judge-agreement", "0.8", "--human-agreement", "0.85", "--llm-cells", "30000")
    better = run_power("--judge-agreement", "0.95", "--human-agreement", "0.85", "--llm-cells", "30000")
    assert chance["judgments_needed_with_judge"] == chance["judgments_needed_alone"]
    assert chance["saving"] == 0
    assert good["judgments_needed_alone"] == chance["judgments_needed_alone"]
    assert (
        chance["judgments_needed_alone"] > good["judgments_needed_with_judge"] > better["judgments_needed_with_judge"]
    )
    assert good["rho"] == pytest.approx(0.7 * 0.6)


def test_the_power_command_prints_humans_alone_and_with_the_judge(capsys):
    call_command("power", "--judge-agreement", "0.8", "--llm-cells", "5000", "--simulations", "500", "--seed", "2")
    out = capsys.readouterr().out
    assert "with the LLM judge" in out
    assert "rho 0.300 on 5000 LLM-judged cells" in out
    assert "alone," in out
    assert "with the judge" in out


def test_the_power_command_refuses_a_judge_for_the_best_vs_worst_figure_and_bad_agreements():
    with pytest.raises(CommandError, match="apply to --test reported only"):
        call_command("power", "--test", "best-vs-worst", "--judge-agreement", "0.8")
    with pytest.raises(CommandError, match="share between 0 and 1"):
        call_command("power", "--judge-agreement", "1.8", "--simulations", "100")
