import io
import json
import random
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from analysis.services.simulated_judges import simulate_judges
from surveys.models import Assignment, Cell, Judgment, Participant
from surveys.services.study_files import import_study

DEMO = Path(__file__).resolve().parents[2] / "surveys" / "demo" / "demo.study.json"


@pytest.fixture
def demo(db):
    return import_study(json.loads(DEMO.read_text(encoding="utf-8")))


def test_simulated_judges_take_the_survey_through_its_services(demo):
    out = io.StringIO()
    call_command("simulate_judges", "demo", "--judges", "5", "--ability", "gpt-4o=2", stdout=out)
    assert "5 of 5 simulated judges completed 'demo'" in out.getvalue()
    assert Participant.objects.filter(status=Participant.Status.COMPLETED, exclusion="").count() == 5
    # 5 judges × 3 pages × 5 questions, all valid, and the cells count them as completed.
    assert Judgment.objects.valid().count() == 75
    assert sum(Cell.objects.values_list("completed", flat=True)) == 15
    # A strong system wins most of its comparisons.
    gpt = Judgment.objects.filter(winner__system__key="gpt-4o").count()
    against = Judgment.objects.filter(loser__system__key="gpt-4o").count()
    assert gpt > against


def test_until_completed_tops_up_instead_of_adding_more(demo):
    call_command("simulate_judges", "demo", "--until-completed", "4", stdout=io.StringIO())
    call_command("simulate_judges", "demo", "--until-completed", "4", stdout=io.StringIO())
    assert Participant.objects.filter(status=Participant.Status.COMPLETED).count() == 4


def test_bad_arguments_are_clear(demo):
    with pytest.raises(CommandError, match="SYSTEM=NUMBER"):
        call_command("simulate_judges", "demo", "--ability", "gpt-4o")
    with pytest.raises(CommandError, match="No study with slug 'x'"):
        call_command("simulate_judges", "x")


def wins_of(system, question=None, *, against_all_but=None):
    judgments = Judgment.objects.valid()
    if question:
        judgments = judgments.filter(question__key=question)
    if against_all_but:
        judgments = judgments.exclude(winner__system__key=against_all_but).exclude(loser__system__key=against_all_but)
    won = judgments.filter(winner__system__key=system).count()
    return won / (won + judgments.filter(loser__system__key=system).count())


def test_an_ability_for_one_question_applies_there_only_and_the_order_effect_favours_the_first(demo):
    call_command(
        "simulate_judges",
        "demo",
        "--judges",
        "100",  # enough comparisons between the two equal systems for the order effect to show clearly
        "--ability",
        "features:claude=4",
        "--ability",
        "gpt-4o=-4",
        "--order-effect",
        "1.5",
        stdout=io.StringIO(),
    )
    # expit(±4) shifted by the order effect: about 0.96 on average, far from the 0.5 of no ability; the bounds
    # leave room for the few dozen judgments a question gets here.
    assert wins_of("claude", "features") > 0.8
    # Elsewhere claude is 0, as are the humans: against them it wins about half (gpt-4o, at -4, it beats anyway).
    assert 0.3 < wins_of("claude", "weighting", against_all_but="gpt-4o") < 0.7
    assert wins_of("gpt-4o", "weighting") < 0.2
    assert wins_of("gpt-4o", "features") < 0.2
    among_equals = Judgment.objects.valid().exclude(winner__system__key__in=["gpt-4o", "claude"])
    among_equals = among_equals.exclude(loser__system__key__in=["gpt-4o", "claude"])
    first = among_equals.filter(winner_position=Judgment.Position.FIRST).count() / among_equals.count()
    assert first > 0.7  # expit(1.5) = 0.82 between systems of equal ability


def test_inattentive_judges_pick_at_random_whatever_the_abilities(demo):
    call_command(
        "simulate_judges", "demo", "--judges", "30", "--ability", "gpt-4o=6", "--inattentive", "1", stdout=io.StringIO()
    )
    assert Participant.objects.filter(status=Participant.Status.COMPLETED, exclusion="").count() >= 28
    assert 0.35 < wins_of("gpt-4o") < 0.65


def test_answer_sd_makes_a_systems_answers_differ_from_vignette_to_vignette(demo):
    from analysis.services.simulated_judges import RaterModel
    from surveys.models import Answer

    answers = list(Answer.objects.filter(system__key="claude").select_related("system", "vignette"))
    model = RaterModel(answer_sd=1.0, seed=3)
    effects = [model.answer_effect("features", answer) for answer in answers]
    assert len(set(effects)) == len(answers)
    assert effects == [model.answer_effect("features", a) for a in answers]
    assert RaterModel(answer_sd=0.0).answer_effect("features", answers[0]) == 0.0
    call_command(
        "simulate_judges", "demo", "--judges", "60", "--answer-sd", "3", "--order-effect", "0", stdout=io.StringIO()
    )
    # With answers this different, a system's win rate on features differs widely between vignettes.
    rates = []
    for answer in answers:
        won = Judgment.objects.valid().filter(question__key="features", winner=answer).count()
        lost = Judgment.objects.valid().filter(question__key="features", loser=answer).count()
        rates.append(won / (won + lost))
    assert max(rates) - min(rates) > 0.4


def test_abilities_name_known_systems_and_questions(demo):
    with pytest.raises(CommandError, match="not a system of 'demo'"):
        call_command("simulate_judges", "demo", "--ability", "gpt-5=1")
    with pytest.raises(CommandError, match="not a question of 'demo'"):
        call_command("simulate_judges", "demo", "--ability", "looks:gpt-4o=1")
    with pytest.raises(CommandError, match="between 0 and 1"):
        call_command("simulate_judges", "demo", "--inattentive", "1.5")


def _pages_and_picks(study) -> list[tuple]:
    return [
        (
            a.participant.prolific_pid == "",
            a.position,
            a.vignette.key,
            a.first_answer.system.key,
            a.second_answer.system.key,
        )
        for a in Assignment.objects.filter(participant__study=study).order_by("participant_id", "position")
    ] + [
        (j.assignment.position, j.question.key, j.winner.system.key, j.winner_position)
        for j in Judgment.objects.filter(assignment__participant__study=study).order_by("assignment_id", "question_id")
    ]


def test_the_same_seed_gives_the_same_pages_and_picks_whatever_ran_before(demo):
    again = import_study({**json.loads(DEMO.read_text(encoding="utf-8")), "slug": "demo-again"})
    random.seed(1)
    simulate_judges(study=demo, judges=6, abilities={"gpt-4o": 1.0}, seed=7)
    random.random()  # other work in between moves the process's random state
    simulate_judges(study=again, judges=6, abilities={"gpt-4o": 1.0}, seed=7)

    assert _pages_and_picks(demo) == _pages_and_picks(again)
    assert len(_pages_and_picks(demo)) == 6 * 3 + 6 * 3 * 5
