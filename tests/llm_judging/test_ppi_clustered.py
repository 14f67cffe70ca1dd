"""PPI++ in the study's design: judgments on one vignette are correlated, so the interval clusters by vignette.

Design (tests/llm_judging/study_design.py): 7 systems, 12 vignettes, 8 humans per cell, answer SD 0.6, the
judge on the humans' cells (1x) or ten times as many (10x). Tolerance: with R = 150 replications a 95%
interval's coverage of one system has binomial SE sqrt(0.95 * 0.05 / 150) = 0.018; the mean over 6 systems is
held to 0.95 - 3 SE. The seeds are fixed (deterministic); the bound says why passing is not luck.
benchmarks/ppi_coverage.py runs the same at 1000 replications (docs/statistics-ppi.md).
"""

import numpy as np
import pytest

from llm_judging import ppi
from tests.analysis.rscript import run_r

from .study_design import StudyDesign, coverage, intervals, simulate

REPS = 150
FLOOR = 0.95 - 3 * np.sqrt(0.95 * 0.05 / REPS)


def test_with_the_judge_on_ten_times_the_cells_clustered_intervals_cover_and_independent_ones_do_not():
    result = coverage(StudyDesign(judge_multiple=10), reps=REPS, seed=11)
    assert result["ppi_clustered"]["coverage"] >= FLOOR, result
    assert result["ppi_independent"]["coverage"] < 0.85, result  # ppi-python's rows-independent interval
    assert result["ppi_clustered"]["width"] < 0.9 * result["human_clustered"]["width"], result  # the judge helps


def test_a_judge_on_exactly_the_humans_cells_once_changes_nothing_lambda_zero_and_the_human_only_interval():
    data = simulate(np.random.default_rng(12), StudyDesign(judge_multiple=1))
    found = intervals(data)
    calibrated, human = found["ppi_clustered"], found["human_clustered"]
    assert calibrated.lam == 0.0
    np.testing.assert_allclose(calibrated.estimate, human.estimate, atol=1e-10)
    np.testing.assert_allclose(calibrated.ci_low, human.ci_low, atol=1e-10)
    for k in range(len(human.se)):
        assert ppi.worth_human_judgments(human.n, human.se[k], calibrated.se[k]) == pytest.approx(human.n)
    assert (calibrated.clusters, calibrated.df) == (12, 11.0)
    # ppi-python's independent-rows tuning finds a lambda and claims a saving where there is none
    assert found["ppi_independent"].lam > 0


@pytest.mark.r
def test_the_human_only_clustered_interval_is_rs_sandwich_vcovcl(tmp_path):
    data = simulate(np.random.default_rng(13), StudyDesign(judge_multiple=1))
    human = ppi.classical_logistic(data["X"], data["Y"], clusters=data["clusters"])
    table = {f"x{k}": list(data["X"][:, k]) for k in range(data["X"].shape[1])}
    table |= {"y": list(data["Y"].astype(int)), "vignette": list(data["clusters"])}
    script = """
library(sandwich)
d <- read.csv("rows.csv")
fit <- glm(y ~ . - vignette - 1, family = binomial, data = d)
v <- vcovCL(fit, cluster = ~ vignette, type = "HC0", cadjust = TRUE)
write.csv(data.frame(estimate = coef(fit), se = sqrt(diag(v))), "out_fit.csv", row.names = FALSE)
"""
    fit = run_r(script, {"rows": table}, tmp_path)["fit"]
    np.testing.assert_allclose(human.estimate, fit["estimate"], atol=1e-7)
    np.testing.assert_allclose(human.se, fit["se"], rtol=1e-6)


def test_the_df_count_the_vignettes_of_the_estimating_equation_not_only_the_humans():
    data = simulate(np.random.default_rng(14), StudyDesign(vignettes=3, judge_multiple=10))
    calibrated = intervals(data)["ppi_clustered"]
    assert calibrated.lam > 0  # the judge's 27 further vignettes enter the estimating equation
    assert (calibrated.clusters, calibrated.df) == (30, 29.0)
    human = ppi.classical_logistic(data["X"], data["Y"], clusters=data["clusters"])
    assert (human.clusters, human.df) == (3, 2.0)


def test_with_fewer_than_three_vignettes_a_row_shows_estimates_and_no_interval_with_the_reason():
    from llm_judging.services.estimates import Calibrated, row

    data = simulate(np.random.default_rng(15), StudyDesign(vignettes=2, judge_multiple=1))
    found = intervals(data)
    calibrated = Calibrated(found["ppi_clustered"], found["human_clustered"], ["b"], n_cells=42, extra_cells=0)
    shown = row("q", "judge", "b", {}, calibrated, 0)
    assert shown.ppi_estimate is not None
    assert shown.human_estimate is not None
    assert (shown.ppi_low, shown.ppi_high, shown.human_low, shown.human_high) == (None, None, None, None)
    assert shown.why_no_interval.startswith("No PPI and human-only intervals: only 2 vignettes")
