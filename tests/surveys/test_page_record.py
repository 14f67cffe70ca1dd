"""Recording a judging page (surveys/services/page_record.py), the same on both backends: one statement on
PostgreSQL, the same steps in one transaction on SQLite. Each test runs in both suites."""

import pytest
from django.core.exceptions import ValidationError
from django.db import connection

from surveys.models import Assignment, Cell, Judgment, Participant
from surveys.services.page_record import record_page
from tests.surveys.test_judging_flow import csrf_client, live_study, picks, through_demographics


def judge_at_pages(**kwargs):
    study = live_study(**kwargs)
    through_demographics(csrf_client(), study)
    participant = Participant.objects.select_related("study").get()
    return study, participant, list(participant.assignments.order_by("position"))


def counters(page):
    cell = Cell.objects.get(pk=page.cell_id)
    return cell.completed, cell.reserved


@pytest.mark.django_db
def test_a_page_is_closed_with_one_judgment_per_question_and_its_cell_counted(django_assert_max_num_queries):
    study, participant, pages = judge_at_pages()
    questions = list(study.questions.order_by("position"))
    second = picks(study, "second")
    assert counters(pages[0]) == (0, 1)

    # PostgreSQL: the statement alone; SQLite: the lock, the page closed, the judgments, the cell, one by one.
    with django_assert_max_num_queries(1 if connection.vendor == "postgresql" else 7):
        stored = record_page(participant=participant, assignment=pages[0], picks=second, questions=questions)

    assert stored.status == Assignment.Status.COMPLETED
    assert Assignment.objects.get(pk=pages[0].pk).status == Assignment.Status.COMPLETED
    judged = list(Judgment.objects.filter(assignment=pages[0]).order_by("question__position"))
    assert [j.question_id for j in judged] == [q.pk for q in questions]
    assert {(j.winner_id, j.loser_id, j.winner_position) for j in judged} == {
        (pages[0].second_answer_id, pages[0].first_answer_id, Judgment.Position.SECOND)
    }
    assert counters(pages[0]) == (1, 0)


@pytest.mark.django_db
def test_a_second_submit_of_a_closed_page_changes_nothing():
    study, participant, pages = judge_at_pages()
    record_page(participant=participant, assignment=pages[0], picks=picks(study))
    again = record_page(participant=participant, assignment=pages[0], picks=picks(study, "second"))
    assert again.status == Assignment.Status.COMPLETED
    assert Judgment.objects.count() == study.questions.count()
    assert set(Judgment.objects.values_list("winner_position", flat=True)) == {Judgment.Position.FIRST}
    assert counters(pages[0]) == (1, 0)


@pytest.mark.django_db
def test_a_later_page_is_refused_while_an_earlier_one_is_open_and_nothing_is_stored():
    study, participant, pages = judge_at_pages()
    with pytest.raises(ValidationError):
        record_page(participant=participant, assignment=pages[1], picks=picks(study))
    assert not Judgment.objects.exists()
    assert Assignment.objects.get(pk=pages[1].pk).status == Assignment.Status.RESERVED
    assert counters(pages[1]) == (0, 1)


@pytest.mark.django_db
def test_a_page_that_holds_no_place_is_closed_without_counting_its_cell():
    study, participant, pages = judge_at_pages()
    Assignment.objects.filter(pk=pages[0].pk).update(counts_toward_cell=False)
    Cell.objects.filter(pk=pages[0].cell_id).update(reserved=0)
    pages[0].counts_toward_cell = False
    record_page(participant=participant, assignment=pages[0], picks=picks(study))
    assert Judgment.objects.count() == study.questions.count()
    assert counters(pages[0]) == (0, 0)
