"""The simultaneous band and the rank sets (analysis/bradley_terry/ranks.py); the band's critical value against R's
mvtnorm::qmvt."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from analysis import bradley_terry as bt
from analysis.bradley_terry.ranks import max_abs_t_critical, rank_claims

from .rscript import run_r

SEED_ABILITIES = np.array([0.0, 0.0, 0.0, 0.3, 0.4, -0.3, 0.6])


def headline_of(abilities, *, vignettes=12, repetitions=8, seed=1, answer_sd=0.4, judges=None):
    data = bt.simulate_judgments(
        np.asarray(abilities, float), vignettes=vignettes, repetitions=repetitions,
        rng=np.random.default_rng(seed), answer_sd=answer_sd,
    )  # fmt: skip
    return bt.headline_test(
        data.winners, data.losers, len(abilities), reference=0,
        judges=data.judges if judges is None else judges(data), vignettes=data.vignettes,
    )  # fmt: skip


def claims(test, seed=7, draws=20_000):
    return rank_claims(test, rng=np.random.default_rng(seed), draws=draws)


R_QMVT = """
suppressMessages(library(mvtnorm))
R <- cov2cor(as.matrix(read.csv("covariance.csv")))
set.seed(1)
known <- qmvnorm(0.95, tail = "both.tails", corr = R)$quantile
common <- qmvt(0.95, tail = "both.tails", corr = R, df = DF)$quantile
write.csv(data.frame(known = known, common = common), "out_q.csv", row.names = FALSE)
"""


@pytest.mark.r
def test_the_band_critical_value_against_mvtnorm(tmp_path):
    """With the variance known it is mvtnorm's max-|z| quantile; with it estimated (Wishart, n df) it is above the
    multivariate t with one common chi-square (qmvt), the limit of perfectly correlated variance errors."""
    test = headline_of(SEED_ABILITIES)
    result = rank_claims(test, rng=np.random.default_rng(3))
    df = round(result.band_df)
    assert abs(result.band_df - df) < 1e-4  # balanced: every system's Satterthwaite df is vignettes - 1
    covariance = test.covariance[1:, 1:]
    table = {f"s{k}": list(covariance[:, k]) for k in range(covariance.shape[1])}
    r = run_r(R_QMVT.replace("DF", str(df)), {"covariance": table}, tmp_path)["q"]
    known = max_abs_t_critical(covariance, math.inf, level=0.95, rng=np.random.default_rng(4))
    assert_allclose(known, r["known"][0], atol=0.02)  # Monte Carlo error of both: about 0.01
    assert r["common"][0] < result.band_critical < stats.t.ppf(1 - 0.025 / 6, df)  # below Bonferroni's


def test_the_band_is_wider_than_each_interval_and_narrower_than_bonferroni():
    test = headline_of(SEED_ABILITIES)
    result = claims(test)
    single = stats.t.ppf(0.975, result.band_df)
    bonferroni = stats.t.ppf(1 - 0.025 / 6, result.band_df)
    assert single < result.band_critical < bonferroni
    half_width = (result.band_high - result.band_low)[1:] / 2
    assert_allclose(half_width, result.band_critical * test.se[1:], rtol=1e-12)
    assert np.all(result.band_low[1:] < test.ci_low[1:])
    assert result.band_low[0] == result.band_high[0] == 0.0  # the reference's ability is 0 by definition


@pytest.mark.parametrize("df", [2, 5, math.inf])
def test_with_independent_estimates_the_critical_value_is_sidaks_t(df):
    """Independent estimates with independently estimated variances: four independent t's."""
    critical = max_abs_t_critical(np.eye(4), df, level=0.95, rng=np.random.default_rng(0), draws=100_000)
    assert critical == pytest.approx(stats.t.ppf(0.5 + 0.95**0.25 / 2, df), rel=0.01)


def test_one_system_gets_the_single_intervals_t():
    critical = max_abs_t_critical(np.eye(1) * 0.3, 3.0, level=0.95, rng=np.random.default_rng(1), draws=100_000)
    assert critical == pytest.approx(stats.t.ppf(0.975, 3), rel=0.01)


def test_a_clearly_best_system_is_said_best_with_95_percent_confidence_and_only_it():
    result = claims(headline_of([0.0, 1.0, 3.0, 2.0], vignettes=6, repetitions=30, answer_sd=0.0))
    assert [result.claim(k) for k in range(4)] == [
        "worst with 95% confidence", "rank 3 with 95% confidence", "best with 95% confidence",
        "rank 2 with 95% confidence",
    ]  # fmt: skip
    assert result.best() == "2"


def test_close_systems_get_a_rank_set_and_no_best_claim():
    result = claims(headline_of(SEED_ABILITIES))
    assert result.best() == ""
    assert all(result.rank_low[k] <= result.rank[k] <= result.rank_high[k] for k in range(7))
    top = int(np.argmax(result.estimates))
    assert result.rank[top] == 1
    assert result.claim(top) == f"rank 1–{result.rank_high[top]}"
    assert result.rank_high[top] > 1


def test_the_same_seed_gives_the_same_sets():
    test = headline_of(SEED_ABILITIES, answer_sd=0.0, repetitions=20)
    first, again = claims(test, seed=5), claims(test, seed=5)
    assert first.band_critical == again.band_critical
    assert np.array_equal(first.rank_low, again.rank_low)
    assert np.array_equal(first.rank_high, again.rank_high)


def test_stepdown_decides_at_least_what_one_step_decides():
    """Pairs are claimed at the first step's max-|t| over all differences; later steps only add claims."""
    test = headline_of([0.0, 0.4, 0.8, 1.2, 1.6], vignettes=8, repetitions=20, answer_sd=0.0)
    result = claims(test)
    critical = result.ranks_critical
    single_step_above = np.zeros(5, int)
    for j in range(5):
        for k in range(5):
            if j != k:
                weights = np.zeros(5)
                weights[j], weights[k] = 1.0, -1.0
                difference = test.contrast(weights)
                single_step_above[k] += difference.estimate - critical * difference.se > 0
    assert np.all(result.rank_low >= 1 + single_step_above)
    assert result.ranks_df <= np.nanmin(test.df)


def test_there_is_no_band_and_no_rank_claim_below_three_vignettes_with_the_reason():
    result = claims(headline_of(SEED_ABILITIES, vignettes=2, repetitions=20))
    assert not result.tested
    assert np.isnan(result.band_low).all()
    assert result.best() == ""
    assert result.claim(6) == "no rank claim: no test: only 2 vignettes. Results cannot be generalised to other " \
        "vignettes (or other answers of these systems) from fewer than 3."  # fmt: skip


def test_there_is_no_rank_claim_with_one_judge():
    result = claims(headline_of(SEED_ABILITIES, judges=lambda data: np.zeros(len(data.winners))))
    assert "only one judge" in result.claim(1)


def test_a_system_that_never_lost_has_no_rank_and_widens_the_others():
    data = bt.simulate_judgments(np.array([0.0, 2.0, 4.0, 0.5]), vignettes=6, repetitions=30,
                                 rng=np.random.default_rng(2))  # fmt: skip
    winners, losers = data.winners.copy(), data.losers.copy()
    lost = losers == 2  # system 2 never loses: its estimate is infinite
    winners[lost], losers[lost] = 2, data.winners[lost]
    test = bt.headline_test(winners, losers, 4, reference=0, judges=data.judges, vignettes=data.vignettes)
    result = claims(test)
    assert result.claim(2).startswith("no rank: no finite estimate")
    assert result.best() == ""  # system 1 beats the rest, but the one without an estimate may be above it
    assert (result.rank_low[1], result.rank_high[1]) == (1, 2)
    assert result.claim(1) == "rank 1–2"
