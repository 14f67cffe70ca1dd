"""Judge quality: the four measures, flags with reasons, the dashboard's list and sensitivity rows."""

import json
import re

import pytest
from django.urls import reverse

from analysis.services.judge_quality import judge_measures, quality_summary
from analysis.services.simulated_judges import simulate_judges
from surveys.models import Assignment, Judgment, Participant, question_label
from surveys.services.study_files import import_study
from tests.analysis.test_simulate_judges import DEMO

STRONG = {"gpt-4o": 4.0, "claude": 1.5, "philosopher": -3.0}  # clear differences: careful judges agree


@pytest.fixture
def demo(db):
    return import_study(json.loads(DEMO.read_text(encoding="utf-8")))


def judged(demo, *, judges=40, inattentive=0.0, seed=4) -> list[int]:
    careless: list[int] = []
    simulate_judges(
        study=demo, judges=judges, abilities=STRONG, seed=seed, inattentive=inattentive, inattentive_ids=careless
    )
    return careless


def test_judges_who_pick_at_random_are_flagged_and_careful_ones_rarely(demo):
    careless = judged(demo, judges=60, inattentive=0.3)
    measures = judge_measures(study=demo)
    flagged = {j.participant_id for j in measures if j.reasons}
    measured = {j.participant_id for j in measures}  # the study filled: later arrivals were screened out
    careless, attentive = measured & set(careless), measured - set(careless)
    assert careless
    assert len(flagged & careless) >= len(careless) / 3
    assert len(flagged & attentive) <= len(attentive) / 10
    reasons = {r for j in measures for r in j.reasons}
    assert any("coin flips explain the picks better than the judges' consensus" in r for r in reasons)


def straight_line(participant: Participant) -> None:
    """Every page of this judge: the answer shown first wins on all questions."""
    for judgment in Judgment.objects.filter(assignment__participant=participant).select_related("assignment"):
        judgment.winner_id = judgment.assignment.first_answer_id
        judgment.loser_id = judgment.assignment.second_answer_id
        judgment.winner_position = "first"
        judgment.save()


def test_a_straight_liner_and_a_hurried_judge_are_flagged_with_why_and_never_excluded(demo):
    judged(demo)
    liner, hurried = Participant.objects.filter(status="completed").order_by("pk")[:2]
    straight_line(liner)
    Assignment.objects.filter(participant=hurried).update(seconds=5)

    reasons = {j.participant_id: j.reasons for j in judge_measures(study=demo)}
    assert "picked the same side on all questions of every page" in reasons[liner.pk]
    assert "picked the answer shown first 100% of the time" in reasons[liner.pk]
    assert any("the study's median time per page" in r for r in reasons[hurried.pk])
    assert Participant.objects.filter(pk__in=[liner.pk, hurried.pk], exclusion="", status="completed").count() == 2


def test_the_sensitivity_row_refits_each_question_without_the_flagged_judges(demo):
    judged(demo)
    liner = Participant.objects.filter(status="completed").first()
    straight_line(liner)
    summary = quality_summary(study=demo)
    flagged = [j.participant_id for j in summary["flagged"]]
    assert liner.pk in flagged
    labels = [question_label(q.key, q.label) for q in demo.questions.all()]
    assert [row.question for row in summary["rows"]] == labels
    row = summary["rows"][0]
    assert row.without == len(flagged)
    assert row.largest_change > 0
    reference = [change for change in row.changes if change[0] == demo.reference_system.label]
    assert reference == [(demo.reference_system.label, 0.0, 0.0)]


def test_the_dashboard_lists_the_flagged_judges_with_why_and_the_sensitivity_rows(demo, researcher, client):
    judged(demo)
    liner = Participant.objects.filter(status="completed").first()
    straight_line(liner)
    html = client.get(reverse("analysis:study", args=[demo.slug])).content.decode()
    assert 'id="judge-quality"' in html
    judges = Participant.objects.filter(status="completed").count()
    assert re.search(rf"\d+ of {judges} judges flagged\.", html)
    assert liner.prolific_pid in html
    assert "picked the same side on all questions of every page" in html
    assert 'id="judge-sensitivity"' in html
