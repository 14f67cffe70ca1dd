"""What a judge measured on a study is worth for planning: its within-pair correlation with the human picks."""

import pytest

from llm_judging.services.data import CellInfo, HumanPick, JudgePick, StudyPicks
from llm_judging.services.planning import human_agreement_with_majority, measured_on_study, within_pair_correlation
from tests.llm_judging.test_agreement_and_page import add_judge

pytestmark = pytest.mark.django_db


def picks(human_a_won: list[bool], judge_a_won: list[bool], *, pairs=("x", "y")) -> StudyPicks:
    """One human and one judge pick per cell; cells alternate between two system pairs."""
    cells = {k: CellInfo(k, 10 * k, 10 * k + 1, pairs[k % 2], "ref") for k in range(len(human_a_won))}
    data = StudyPicks(cells, ["q"], ["ref", *pairs], "ref", [])
    data.human = [HumanPick(k, k, "q", won) for k, won in enumerate(human_a_won)]
    data.llm = [JudgePick("j", k, "ab", 0, "q", won) for k, won in enumerate(judge_a_won)]
    return data


def test_a_judge_that_picks_as_the_human_did_correlates_fully_and_a_constant_one_not_at_all():
    humans = [True, False, True, True, False, False, True, False, True, True, False, True]
    assert within_pair_correlation(picks(humans, humans), judge="j", question="q")[0] == pytest.approx(1.0)
    assert within_pair_correlation(picks(humans, [True] * 12), judge="j", question="q")[0] == 0.0
    flipped = [not won for won in humans]
    assert within_pair_correlation(picks(humans, flipped), judge="j", question="q")[0] == pytest.approx(-1.0)


def test_knowing_only_which_system_of_a_pair_wins_more_is_worth_nothing():
    # Pair x: humans pick answer_a 5 times in 6; pair y: once in 6. The judge says "a" on x and "b" on y.
    humans = [True, False, True, False, True, False, True, False, True, True, True, False]
    judge = [k % 2 == 0 for k in range(12)]
    assert within_pair_correlation(picks(humans, judge), judge="j", question="q")[0] == pytest.approx(0.0)


def test_too_few_human_picks_leave_rho_unmeasured():
    assert within_pair_correlation(picks([True] * 4, [True] * 4), judge="j", question="q") == (None, 4)


def test_humans_agree_with_the_majority_of_the_others_on_their_cell():
    data = StudyPicks({1: CellInfo(1, 1, 2, "x", "ref")}, ["q"], ["ref", "x"], "ref", [])
    data.human = [HumanPick(1, p, "q", won) for p, won in enumerate([True, True, True, False])]
    # Each True sees 2 True vs 1 False among the others; the False sees 3 True: 3 of 4 agree.
    assert human_agreement_with_majority(data) == 0.75


def test_a_study_reports_each_judge_it_was_judged_by(judged_study):
    add_judge(judged_study, "first", "other-model", lambda cell, q, first, second: first.pk)
    measured = measured_on_study(study=judged_study)
    first = measured.judge("first")
    assert first.agreement == pytest.approx(0.5)
    assert first.rho == 0.0  # half its picks go each way on every cell: nothing to predict with
    assert first.cells == judged_study.cells.count()
    assert 0.5 < measured.human_agreement < 1
    assert "first: agreement 0.50, rho 0.00" in first.label()
