"""The headline interval: which interval a question leads with, when it falls back, and what is not a number."""

import numpy as np
import pytest

from analysis import bradley_terry as bt
from analysis.results import Interval
from analysis.results.headline import MIN_VIGNETTES, choose_headline, led_by_headline
from analysis.services.alternatives import style_controlled
from analysis.services.fitting import DEFAULT_PARAMETERS, fit_question
from analysis.services.judged import Judged
from analysis.services.reading import QuestionData
from analysis.services.records import fit_of

SYSTEMS = [{"key": key, "label": key.title(), "kind": "llm"} for key in ("ref", "b", "c", "d")]


def interval(se, *, df, **details) -> Interval:
    est = [0.0, 0.5, -0.3, 0.2]
    low = [None if s is None else e - 2 * s for e, s in zip(est, se, strict=True)]
    high = [None if s is None else e + 2 * s for e, s in zip(est, se, strict=True)]
    return Interval("x", "x", 0.95, low, high, se, {"df": df, **details})


def headline_of(two_way_se, *, vignettes=12):
    intervals = {
        "two_way_robust": interval(two_way_se, df=vignettes - 1),
        "judge_robust": interval([0.0, 0.1, 0.1, 0.1], df=99),
    }
    estimates = [0.0, 0.5, -0.3, 0.2]
    return choose_headline(estimates=estimates, reference=0, intervals=intervals, n_vignettes=vignettes, n_judges=100)


def test_with_enough_vignettes_the_two_way_interval_leads_with_vignettes_minus_one_df():
    headline = headline_of([0.0, 0.2, 0.2, 0.2])
    assert (headline.interval, headline.df, headline.why) == ("two_way_robust", 11, "")
    assert headline.se[1] == 0.2
    assert headline.p[1] == pytest.approx(2 * bt_t_sf(0.5 / 0.2, 11))
    assert headline.p[0] is None  # the reference


def bt_t_sf(t, df):
    from scipy import stats

    return stats.t.sf(t, df)


def test_too_few_vignettes_fall_back_to_the_judge_interval_and_say_so_in_words():
    headline = headline_of([0.0, 0.2, 0.2, 0.2], vignettes=MIN_VIGNETTES - 1)
    assert headline.interval == "judge_robust"
    assert headline.df == 99
    assert f"Only {MIN_VIGNETTES - 1} vignettes: too few to generalise over vignettes" in headline.why
    assert "generalises over judges, for these answers" in headline.why


def test_a_two_way_variance_that_is_not_positive_falls_back_in_words():
    headline = headline_of([0.0, 0.2, None, 0.2])
    assert headline.interval == "judge_robust"
    assert "variance is not positive" in headline.why


def test_a_huge_or_zero_standard_error_is_not_estimable_with_its_reason():
    headline = headline_of([0.0, 6643438.594, 0.0, 0.2])
    assert (headline.se[1], headline.ci_low[1], headline.p[1]) == (None, None, None)
    assert "standard error 6643439" in headline.not_estimable[1]
    assert "zero-width interval" in headline.not_estimable[2]
    assert headline.not_estimable[3] == ""


def simulated_question(*, vignettes: int, answer_sd=0.4, seed=3) -> QuestionData:
    sim = bt.simulate_judgments(
        np.array([0.0, 0.5, -0.3, 0.2]), vignettes=vignettes, repetitions=6, rng=np.random.default_rng(seed),
        answer_sd=answer_sd,
    )  # fmt: skip
    return QuestionData(
        "q", "", sim.winners, sim.losers, sim.first, sim.judges, sim.vignettes, np.zeros(len(sim.winners))
    )


def fitted(data: QuestionData):
    parameters = DEFAULT_PARAMETERS | {"bootstrap": 0, "split_halves": 0}
    return fit_question(data, systems=SYSTEMS, reference=0, parameters=parameters, position=0, vignette_keys={})


def test_a_refit_leads_with_the_two_way_interval_and_takes_p_holm_and_stars_from_it():
    result = fitted(simulated_question(vignettes=10))
    headline = result.headline
    assert headline.interval == "two_way_robust"
    assert (headline.df, headline.n_vignettes) == (9, 10)
    two_way = result.intervals["two_way_robust"]
    assert headline.ci_low == two_way.ci_low
    p = np.array([np.nan if v is None else v for v in headline.p])
    assert result.holm_p[1:] == pytest.approx(list(bt.holm(p)[1:]))
    assert result.holm_p != pytest.approx([np.nan if i.p is None else i.p for i in result.fit.items], nan_ok=True)
    shown = led_by_headline(result)
    assert shown.fit.items[1].ci_low == headline.ci_low[1]
    assert shown.intervals["wald"].ci_low[1] == result.fit.items[1].ci_low  # the Wald one stays, as a column
    assert "two_way_robust" not in shown.intervals  # it is the lead: not repeated


def test_with_two_vignettes_the_refit_leads_with_the_judge_robust_interval():
    result = fitted(simulated_question(vignettes=2))
    assert result.headline.interval == "judge_robust"
    assert result.headline.df == result.n_participants - 1
    assert "Only 2 vignettes" in result.headline.why


def test_length_that_differs_only_by_system_is_not_estimable_not_a_huge_number():
    data = simulated_question(vignettes=3)
    words = np.array([100.0, 250.0, 180.0, 400.0])  # every answer of a system is as long as the others
    winners, losers, first, clusters, vignettes, _ = data.arrays()
    judged = Judged(winners, losers, first, clusters, vignettes, words[winners] - words[losers],
                    [s["key"] for s in SYSTEMS], 0, DEFAULT_PARAMETERS)  # fmt: skip
    styled = style_controlled(judged)
    assert styled.fit is None
    assert styled.problems[0].startswith("Not estimable here: the length differences are explained by which systems")


def test_a_stored_fit_with_a_huge_se_keeps_no_numbers_and_says_why():
    result = bt.fit(np.array([1, 1, 2, 0]), np.array([0, 2, 1, 1]), 3, reference=0)
    result.se[2] = 47453132.812
    item = fit_of(result).items[2]
    assert (item.estimate, item.se, item.ci_low, item.p) == (None, None, None, None)
    assert item.not_estimable.startswith("not estimable here: standard error 47453133")


def test_an_interval_column_with_a_huge_se_or_zero_width_stores_no_bounds():
    from types import SimpleNamespace

    from analysis.services.records import interval_of

    result = SimpleNamespace(level=0.95, ci_low=np.array([0.0, -0.2, -9e6, 0.09]),
                             ci_high=np.array([0.0, 0.9, 9e6, 0.09]), se=np.array([0.0, 0.28, 4e6, 0.0]))  # fmt: skip
    stored = interval_of("two_way_bootstrap", result, details={})
    # The reference keeps [0, 0]; a huge SE and a zero-width interval at 0.09 keep no numbers.
    assert stored.ci_low == [0.0, -0.2, None, None]
    assert stored.se == [0.0, 0.28, None, None]
