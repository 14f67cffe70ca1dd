"""The headline: a refit leads with the headline test, a narrower interval without p where it cannot generalise,
and what is not a number."""

import numpy as np
import pytest

from analysis import bradley_terry as bt
from analysis.bradley_terry.headline_test import MIN_VIGNETTES
from analysis.results.headline import led_by_headline
from analysis.services.alternatives import style_controlled
from analysis.services.fitting import DEFAULT_PARAMETERS, fit_question
from analysis.services.judged import Judged
from analysis.services.reading import QuestionData
from analysis.services.records import fit_of

SYSTEMS = [{"key": key, "label": key.title(), "kind": "llm"} for key in ("ref", "b", "c", "d")]


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


def test_a_refit_leads_with_the_headline_test_and_takes_p_holm_and_stars_from_it():
    data = simulated_question(vignettes=10)
    result = fitted(data)
    headline = result.headline
    assert (headline.interval, headline.tested, headline.n_vignettes, headline.why) == ("cr2_vignette", True, 10, "")
    winners, losers, _first, judges, vignettes, _ = data.arrays()
    test = bt.headline_test(winners, losers, 4, reference=0, judges=judges, vignettes=vignettes)
    assert headline.se[1:] == pytest.approx(list(test.se[1:]))
    assert headline.df[1:] == pytest.approx(list(test.df[1:]))  # Satterthwaite, per system
    assert headline.df[0] is None  # the reference has no test
    assert len(set(headline.df[1:])) > 1
    assert result.holm_p[1:] == pytest.approx(list(bt.holm(test.p)[1:]))
    assert result.holm_p != pytest.approx([np.nan if i.p is None else i.p for i in result.fit.items], nan_ok=True)
    shown = led_by_headline(result)
    assert shown.fit.items[1].ci_low == headline.ci_low[1]
    assert shown.intervals["wald"].ci_low[1] == result.fit.items[1].ci_low  # the Wald one stays, as a column
    assert "two_way_robust" in shown.intervals  # the old two-way interval is a column to compare with


@pytest.mark.parametrize("vignettes", [1, MIN_VIGNETTES - 1])
def test_with_too_few_vignettes_a_refit_shows_a_narrower_interval_and_no_p_holm_or_stars(vignettes):
    result = fitted(simulated_question(vignettes=vignettes))
    headline = result.headline
    assert (headline.interval, headline.tested) == ("judge_robust", False)
    assert headline.label == "Judge-robust CI (narrower, no test)"
    assert f"only {vignettes} vignette" in headline.why
    assert "no p, Holm p or stars" in headline.why
    assert headline.p == [None] * 4
    assert result.holm_p == [None] * 4
    assert result.stars == [""] * 4
    assert headline.ci_low[1] == result.intervals["judge_robust"].ci_low[1]
    shown = led_by_headline(result)
    assert [item.p for item in shown.fit.items] == [None] * 4
    assert [item.z for item in shown.fit.items] == [None] * 4
    assert shown.fit.items[1].estimate is not None
    assert shown.fit.items[1].ci_low is not None


def test_with_one_judge_the_narrower_interval_is_the_wald_one_without_p():
    data = simulated_question(vignettes=6)
    one_judge = QuestionData(
        "q", "", data.winners, data.losers, data.first, np.zeros_like(data.clusters), data.vignettes,
        np.zeros(len(data.winners)),
    )  # fmt: skip
    result = fitted(one_judge)
    headline = result.headline
    assert (headline.interval, headline.tested) == ("wald", False)
    assert "only one judge" in headline.why
    assert result.stars == [""] * 4
    shown = led_by_headline(result)
    assert shown.fit.items[1].p is None
    assert "wald" not in shown.intervals  # it leads: not repeated as a column


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
