"""The power page's LLM judges come from llm_judging through a registered provider; analysis never imports it."""

from analysis.services import measured_judges
from analysis.services.measured_judges import NOTHING_MEASURED, MeasuredJudge, StudyMeasurements
from llm_judging.services.planning import measured_on_study as llm_judging_measures


def test_llm_judging_registers_how_judges_are_measured_when_django_starts(db):
    assert measured_judges._providers == [llm_judging_measures]


def test_without_a_provider_nothing_is_measured_and_the_page_plans_with_humans_alone(monkeypatch, db):
    monkeypatch.setattr(measured_judges, "_providers", [])
    assert measured_judges.measured_on_study(study=None) == NOTHING_MEASURED


def test_the_registered_provider_answers_for_the_study(monkeypatch):
    judge = MeasuredJudge("gpt", agreement=0.8, rho=0.5, cells=12, human_picks=40)
    monkeypatch.setattr(measured_judges, "_providers", [])
    measured_judges.provide_measurements(lambda *, study: StudyMeasurements(0.7, [judge] if study == "s" else []))
    assert measured_judges.measured_on_study(study="s").judge("gpt") == judge
    assert measured_judges.measured_on_study(study="t").judges == []
