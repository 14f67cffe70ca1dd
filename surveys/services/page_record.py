"""Recording one judging page: its judgments stored and the page closed together, exactly once.

On PostgreSQL this is one statement (a data-modifying WITH query, atomic on its own): the participant's
row lock, the page closed under the condition "still open, and no earlier page open", its judgments
inserted and its cell counted. A second submit of the same page, from another tab or a double click,
waits for the first's lock and then finds the page closed: it changes nothing. Elsewhere (SQLite) the
same steps run as separate statements in one transaction. One of the two places the judging path writes
SQL by hand (the other: allocation_sql.py); tests/surveys/test_page_record.py runs both paths.
"""

from datetime import datetime
from typing import NamedTuple

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from ..models import Assignment, Cell, Judgment, Participant, Question
from .live_content import content_of


class PageJudgment(NamedTuple):
    """One question's pick on a page, as stored in a Judgment row."""

    question_id: int
    winner_id: int
    loser_id: int
    winner_position: str


def record_page(
    *,
    participant: Participant,
    assignment: Assignment,
    picks: dict[str, str],
    questions: list[Question] | None = None,
    now: datetime | None = None,
) -> Assignment:
    """Store one page's picks (one per question, `first` or `second`) together, and close the page.

    A page that is already closed is left as it is (a double submit); only the current page can be
    answered. Every writer of a participant's assignments holds the participant's row lock first.
    Returns the assignment as stored.
    """
    now = now or timezone.now()
    if questions is None:
        questions = content_of(participant.study).questions
    if set(picks) != {q.key for q in questions}:
        raise ValidationError("Every question needs an answer.")
    if any(pick not in Judgment.Position.values for pick in picks.values()):
        raise ValidationError("Each answer must be A or B.")
    seconds = max(0.0, (now - (assignment.shown_at or assignment.reserved_at)).total_seconds())
    pair: dict[str, int] = {
        Judgment.Position.FIRST: assignment.first_answer_id,
        Judgment.Position.SECOND: assignment.second_answer_id,
    }
    # Plain rows: PostgreSQL takes them as arrays, and only the step-by-step path builds Judgment objects.
    judgments = [
        PageJudgment(
            question.pk, pair[picks[question.key]], pair[other_position(picks[question.key])], picks[question.key]
        )
        for question in questions
    ]
    close = _close_in_one_statement if connection.vendor == "postgresql" else _close_in_steps
    if not close(participant_id=participant.pk, assignment=assignment, judgments=judgments, now=now, seconds=seconds):
        stored = Assignment.objects.get(pk=assignment.pk, participant_id=participant.pk)
        if stored.status != Assignment.Status.RESERVED:
            return stored  # closed already: a double submit, or the back button
        raise ValidationError("This is not the page you are on.")
    assignment.status, assignment.completed_at, assignment.seconds = Assignment.Status.COMPLETED, now, seconds
    return assignment


@transaction.atomic
def _close_in_steps(
    *, participant_id: int, assignment: Assignment, judgments: list[PageJudgment], now, seconds: float
) -> bool:
    Participant.objects.select_for_update().filter(pk=participant_id).values_list("pk").first()
    reserved = Assignment.Status.RESERVED
    earlier_open = Assignment.objects.filter(
        participant_id=participant_id, status=reserved, position__lt=OuterRef("position")
    )
    closed = (
        Assignment.objects.filter(pk=assignment.pk, participant_id=participant_id, status=reserved)
        .exclude(Exists(earlier_open))
        .update(status=Assignment.Status.COMPLETED, completed_at=now, seconds=seconds)
    )
    if not closed:
        return False
    Judgment.objects.bulk_create(
        Judgment(
            assignment_id=assignment.pk,
            question_id=judged.question_id,
            winner_id=judged.winner_id,
            loser_id=judged.loser_id,
            winner_position=judged.winner_position,
            seconds_on_page=seconds,
            created_at=now,
        )
        for judged in judgments
    )
    if assignment.counts_toward_cell:
        Cell.objects.filter(pk=assignment.cell_id, reserved__gte=1).update(
            reserved=F("reserved") - 1, completed=F("completed") + 1
        )
    return True


ONE_STATEMENT = """
WITH locked AS (
    SELECT id FROM {participant} WHERE id = %(participant)s FOR UPDATE
), closed AS (
    UPDATE {assignment} AS page SET status = %(completed)s, completed_at = %(now)s, seconds = %(seconds)s
    FROM locked
    WHERE page.id = %(assignment_id)s AND page.participant_id = locked.id AND page.status = %(reserved)s
      AND NOT EXISTS (
        SELECT 1 FROM {assignment} AS earlier
        WHERE earlier.participant_id = locked.id AND earlier.status = %(reserved)s AND earlier.position < page.position
      )
    RETURNING page.id, page.cell_id, page.counts_toward_cell
), judged AS (
    INSERT INTO {judgment} (assignment_id, question_id, winner_id, loser_id, winner_position, seconds_on_page, created_at)
    SELECT closed.id, picked.question, picked.winner, picked.loser, picked.position, %(seconds)s, %(now)s
    FROM closed,
        unnest(%(questions)s::bigint[], %(winners)s::bigint[], %(losers)s::bigint[], %(positions)s::text[])
        AS picked (question, winner, loser, position)
    RETURNING 1
), counted AS (
    UPDATE {cell} AS cell SET reserved = cell.reserved - 1, completed = cell.completed + 1
    FROM closed WHERE cell.id = closed.cell_id AND closed.counts_toward_cell AND cell.reserved >= 1
    RETURNING 1
)
SELECT (SELECT count(*) FROM closed), (SELECT count(*) FROM judged), (SELECT count(*) FROM counted)
"""


def _close_in_one_statement(
    *, participant_id: int, assignment: Assignment, judgments: list[PageJudgment], now, seconds: float
) -> bool:
    sql = ONE_STATEMENT.format(
        participant=Participant._meta.db_table,
        assignment=Assignment._meta.db_table,
        judgment=Judgment._meta.db_table,
        cell=Cell._meta.db_table,
    )
    params = {
        "participant": participant_id,
        "assignment_id": assignment.pk,
        "completed": Assignment.Status.COMPLETED,
        "reserved": Assignment.Status.RESERVED,
        "now": now,
        "seconds": seconds,
        "questions": [j.question_id for j in judgments],
        "winners": [j.winner_id for j in judgments],
        "losers": [j.loser_id for j in judgments],
        "positions": [str(j.winner_position) for j in judgments],
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        closed, _judged, _counted = cursor.fetchone()
    return bool(closed)


def other_position(position: str) -> str:
    return Judgment.Position.SECOND if position == Judgment.Position.FIRST else Judgment.Position.FIRST
