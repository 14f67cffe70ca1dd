"""Refits store the judge x answer intervals and a bias-reduced fit; the dashboard shows every kind a run has."""

from analysis.models import AnalysisRun
from analysis.results import INTERVAL_KINDS, Interval, IntervalKind
from analysis.services import intervals, records, refit_study

from ..conftest import make_judged_study

FAST = {"bootstrap": 50, "split_halves": 10}


def test_a_refit_stores_judge_and_answer_intervals_beside_the_judge_bootstrap(db):
    study = make_judged_study(participants=40, seed=5)
    question = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST).read_results()
    features = question.question("features")
    assert set(features.intervals) == {"bootstrap", "two_way_robust", "judge_robust", "two_way_bootstrap"}
    robust = features.intervals["two_way_robust"]
    assert robust.details["df"] == 2
    assert robust.details["n_vignette"] == 3
    assert robust.answers.startswith("Judges and answers")
    beta = features.fit.items[1].estimate
    for interval in features.intervals.values():
        assert interval.ci_low[1] < beta < interval.ci_high[1]
        assert interval.ci_low[0] == interval.ci_high[0] == 0.0
    # Few vignettes: the answers' interval is the wider one.
    wald = features.fit.items[1].ci_high - features.fit.items[1].ci_low
    assert robust.ci_high[1] - robust.ci_low[1] > wald


def test_a_system_that_never_wins_has_a_finite_bias_reduced_estimate(db):
    study = make_judged_study(slug="sep", abilities={"alpha": 0.0, "beta": 0.5, "gamma": -40.0}, participants=40)
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    features = run.read_results().question("features")
    assert features.fit.items[2].estimate is None
    firth = features.alternative_fits["bias_reduced"]
    assert firth.label == "Bias-reduced (Firth)"
    assert firth.fit.items[2].estimate < -2


def test_the_dashboard_says_which_interval_answers_which_question(staff_client, db):
    study = make_judged_study(participants=40, seed=5)
    refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    page = staff_client.get("/dashboard/judged/").content.decode()
    for heading in ("Bootstrap CI", "Judge × answer robust CI", "Judge × answer bootstrap CI", "Bias-reduced (Firth)"):
        assert f'<th scope="col">{heading}</th>' in page
    assert "Which interval answers which question" in page
    # The headline test leads (CR2 over vignettes, Satterthwaite df per system); the old two-way interval and the
    # Wald one are columns.
    assert (
        "SE, p, Holm p, stars and 95% CI: <strong>Judge × vignette CR2 CI, t with 1.92–1.94 df (Satterthwaite, per "
        "system); 3 vignettes, 40 judges</strong>" in page
    )
    assert '<th scope="col">Wald CI (conditional on these answers)</th>' in page
    assert '<th scope="col">Judge-robust CI</th>' in page  # beside the headline
    # Which quantity the interval is for, in words (docs/statistics.md, "The estimand").
    assert "are for each system's <strong>population-averaged ability</strong>" in page
    assert "Bootstrap CI: Judges: would another sample of judges" in page
    assert "Judge × answer robust CI: Judges and answers: would other judges" in page


def test_a_new_interval_kind_is_one_entry_and_the_dashboard_shows_it(staff_client, db, monkeypatch):
    def halved_wald(*, judged, main, rng):
        return Interval(
            label="Half-width CI", answers="Nothing: a test kind.", level=0.5,
            ci_low=[None if low is None else low / 2 for low in records.json_safe(main.ci_low)],
            ci_high=[None if high is None else high / 2 for high in records.json_safe(main.ci_high)],
        )  # fmt: skip

    monkeypatch.setitem(intervals.INTERVALS, "halved", halved_wald)
    monkeypatch.setitem(INTERVAL_KINDS, "halved", IntervalKind("Half-width CI", "Nothing: a test kind."))
    study = make_judged_study(participants=40, seed=5)
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    assert run.read_results().question("features").intervals["halved"].level == 0.5
    page = staff_client.get(f"/dashboard/{study.slug}/").content.decode()
    assert '<th scope="col">Half-width CI</th>' in page
    assert "Half-width CI: Nothing: a test kind." in page
