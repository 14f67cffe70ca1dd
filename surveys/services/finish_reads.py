"""What the attention check's answer is judged on, read in one statement under the participant's lock.

Closing a participant's survey needs their pages' states and times, every pick they made and (for the
"too fast" flag) the study's median time. Read through the ORM that was three statements, each compiled
again on every finish; here it is one UNION ALL written once per process from the models' fields, one
tagged row per page and per pick, and on PostgreSQL one more row with the median (unless this process
keeps a large study's median: services/timing.py). SQLite computes the median apart, as timing.py does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from operator import itemgetter

from django.db import connections

from ..models import Assignment, Judgment, Participant
from .timing import counted_median, finished_median_sql, kept_median, median_seconds

PAGE, PICK, FINISHED = "page", "pick", "finished"


@dataclass(frozen=True)
class Judged:
    """A participant's work as it stands: their pages (position, status, seconds), their picks, the median."""

    pages: list[tuple[int, str, float | None]]  # in position order
    positions: list[str]  # each judgment's winner_position
    median_seconds: float | None

    @property
    def all_pages_completed(self) -> bool:
        return bool(self.pages) and all(status == Assignment.Status.COMPLETED for _, status, _ in self.pages)

    @property
    def seconds_total(self) -> float:
        return sum((seconds for _, _, seconds in self.pages if seconds is not None), 0.0)


@functools.cache
def _statement(db: str, *, with_median: bool) -> str:
    connection = connections[db]
    quote = connection.ops.quote_name
    pages, judgments = quote(Assignment._meta.db_table), quote(Judgment._meta.db_table)
    sql = (
        f"SELECT '{PAGE}' AS kind, a.{quote('status')} AS label, a.{quote('seconds')} AS number, "
        f"a.{quote('position')} AS whole FROM {pages} a WHERE a.{quote('participant_id')} = %s "
        f"UNION ALL SELECT '{PICK}', j.{quote('winner_position')}, NULL, NULL FROM {judgments} j "
        f"JOIN {pages} a ON a.{quote('id')} = j.{quote('assignment_id')} WHERE a.{quote('participant_id')} = %s"
    )
    if with_median:
        sql += f" UNION ALL SELECT '{FINISHED}', NULL, m.median, m.n FROM ({finished_median_sql(connection)}) m"
    return sql


def judged(participant: Participant) -> Judged:
    """The participant's pages, picks and the study's median; call under the participant's lock."""
    db = Participant.objects.db
    study = participant.study
    kept = kept_median(study=study)
    with_median = kept is None and connections[db].vendor == "postgresql"
    params = [participant.pk, participant.pk] + ([study.pk] if with_median else [])
    with connections[db].cursor() as cursor:
        cursor.execute(_statement(db, with_median=with_median), params)
        rows = cursor.fetchall()
    pages = sorted(((whole, label, number) for kind, label, number, whole in rows if kind == PAGE), key=itemgetter(0))
    positions = [label for kind, label, _, _ in rows if kind == PICK]
    median: float | None = kept
    if with_median:
        counted = next((int(whole), number) for kind, _, number, whole in rows if kind == FINISHED)
        median = counted_median(study=study, counted=counted)
    elif kept is None:  # SQLite: the median apart
        median = median_seconds(study=study)
    return Judged(pages, positions, median)
