"""Power with an LLM judge (PPI++): the saving as a function of agreement, and the formula against simulated PPI."""

import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from scipy.special import expit

from analysis.power.judge import (
    cell_correlation,
    judge_assisted_power,
    judge_correlation,
    repetitions_needed_with_judge,
    variance_factor,
)
from llm_judging import ppi

DESIGN = dict(systems=7, vignettes=12, repetitions=8, gap=0.4, simulations=2_000, seed=1)


def test_a_judge_at_chance_or_against_the_humans_saves_nothing():
    assert judge_correlation(judge_agreement=0.5, human_agreement=0.9) == 0
    assert judge_correlation(judge_agreement=0.3, human_agreement=0.9) == 0  # PPI++ clips lambda at 0
    assert judge_correlation(judge_agreement=0.9, human_agreement=0.5) == 0  # nothing within a pair to predict
    # A measured per-pick rho beside humans who agree as coin flips: no cell signal, nothing to predict.
    assert cell_correlation(rho=0.3, human_agreement=0.5, repetitions=8) == 0
    assert variance_factor(rho_cell=0.0, human_cells=252, llm_cells=50_000) == 1


def test_judging_exactly_the_human_cells_saves_nothing_however_good_the_judge():
    # The lambda term cancels (docs/statistics-ppi.md): the valid variance is the humans' own.
    assert variance_factor(rho_cell=1.0, human_cells=252, llm_cells=252) == 1
    assert variance_factor(rho_cell=1.0, human_cells=252, llm_cells=100) == 1  # fewer: still no new cell
    result = judge_assisted_power(judge_agreement=0.99, human_agreement=0.95, **DESIGN)  # judge on the design's cells
    assert result.worth_human_judgments == result.human_judgments == 2016
    assert result.saving == 0
    assert result.with_judge_power == result.without.power
    assert "covers only the humans' 252 cells" in result.why_no_saving


def test_the_repetitions_needed_beside_the_judge_are_worth_the_repetitions_needed_alone():
    shape = dict(rho=0.5, human_agreement=0.85, human_cells=252)
    for cells in (2520, 25_200):
        m = repetitions_needed_with_judge(repetitions_alone=30, llm_cells=cells, **shape)
        assert m < 30

        def worth(reps, cells=cells):
            rho_cell = cell_correlation(rho=0.5, human_agreement=0.85, repetitions=reps)
            return reps / variance_factor(rho_cell=rho_cell, human_cells=252, llm_cells=cells)

        assert worth(m) >= 30 > worth(m - 1)


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
    assert plain.why_no_saving == "the judge agrees with the human majority no better than chance"
    assert strong.worth_human_judgments > 1.5 * strong.human_judgments
    assert strong.with_judge_power > strong.without.power + 5 * strong.without.mc_se
    assert strong.why_no_saving is None


def simulated_ppi(rng, *, truth, cells, judged, repetitions, human_agreement, judge_agreement):
    """Two-point model: `repetitions` humans on each of `cells` cells, one judge pick on `judged` cells (those
    included); cell-clustered PPI++ and humans-only intervals."""
    k = len(truth)
    first = rng.integers(0, k, judged)
    second = (first + rng.integers(1, k, judged)) % k
    # The cell's majority side is answer_a with the probability that keeps the pair's Bradley-Terry odds.
    side_a = rng.random(judged) < (expit(truth[first] - truth[second]) - (1 - human_agreement)) / (
        2 * human_agreement - 1
    )
    judge = np.where(side_a, rng.random(judged) < judge_agreement, rng.random(judged) >= judge_agreement)
    rows = np.repeat(np.arange(cells), repetitions)
    human = np.where(side_a[rows], rng.random(len(rows)) < human_agreement, rng.random(len(rows)) >= human_agreement)
    X = ppi.design(first, second, k, 0)
    y, yhat = human.astype(float), judge.astype(float)
    calibrated = ppi.ppi_logistic(X[rows], y, yhat[rows], X, yhat, clusters=rows, clusters_u=np.arange(judged))
    return calibrated, ppi.classical_logistic(X[rows], y, clusters=rows)


@pytest.mark.parametrize(
    ("human_agreement", "judge_agreement", "cells", "judged"),
    [(0.8, 0.85, 150, 1500), (0.9, 0.95, 150, 3000), (0.8, 0.5, 150, 1500), (0.9, 0.95, 150, 150)],
)
def test_the_predicted_width_matches_simulated_cell_clustered_ppi_intervals(
    human_agreement, judge_agreement, cells, judged
):
    rng = np.random.default_rng(12)
    truth = np.array([0.0, 0.2, 0.4])
    ratios, ppi_estimates, human_estimates = [], [], []
    for _ in range(200):
        calibrated, human = simulated_ppi(
            rng, truth=truth, cells=cells, judged=judged, repetitions=4,
            human_agreement=human_agreement, judge_agreement=judge_agreement,
        )  # fmt: skip
        ratios.append(calibrated.se / human.se)
        ppi_estimates.append(calibrated.estimate)
        human_estimates.append(human.estimate)
    rho = judge_correlation(judge_agreement=judge_agreement, human_agreement=human_agreement)
    rho_cell = cell_correlation(rho=rho, human_agreement=human_agreement, repetitions=4)
    predicted = np.sqrt(variance_factor(rho_cell=rho_cell, human_cells=cells, llm_cells=judged))
    # ppi.py's own clustered interval width, relative to the humans' alone, is the predicted one.
    assert np.mean(ratios, axis=0) == pytest.approx([predicted, predicted], abs=0.03)
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
    assert "rho 0.300 per pick" in out
    assert "5000 cells, 4748 beyond the humans' 252" in out
    assert "alone," in out
    assert "with the judge" in out


def test_the_power_command_refuses_a_judge_for_the_best_vs_worst_figure_and_bad_agreements():
    with pytest.raises(CommandError, match="apply to --test reported only"):
        call_command("power", "--test", "best-vs-worst", "--judge-agreement", "0.8")
    with pytest.raises(CommandError, match="share between 0 and 1"):
        call_command("power", "--judge-agreement", "1.8", "--simulations", "100")
