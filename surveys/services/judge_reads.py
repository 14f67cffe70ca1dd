"""The reads every judging page starts with, as statements composed once per process.

A judging page reads the participant with their study (consent, demographics) or their pages with
participant and study (the pairs, the attention check): one statement either way; the pages that write
lock the participant's row the same way, and the entry page reads the study with the person's
participants and its room in one. Built through the ORM, that statement cost more CPU to compile
(84 columns matched, quoted and aliased) and to turn into objects (the participant and study built again
for each of the k rows) than the rest of the request's reads together. Here the SQL is written once per
database connection alias from the models' own fields, so it follows the schema, and each row's objects
are built by `Model.from_db` with the field converters the ORM would apply; the k pages share one
participant and one study.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from django.db import connections
from django.db.models import Model
from django.utils import timezone

from ..models import Assignment, Cell, Participant, Study
from ..models.judging import cell_room_sql

Converter = Callable[[Any, Any, Any], Any]


@dataclass(frozen=True)
class _Table:
    """One model's columns in a statement: where they start in a row and how each value is converted."""

    model: type[Model]
    alias: str
    start: int
    attnames: tuple[str, ...]
    converters: tuple[tuple[int, tuple[Converter, ...], Any], ...]  # (column, converters, expression)

    def build(self, row: Sequence, db: str, connection) -> Model:
        values = list(row[self.start : self.start + len(self.attnames)])
        for index, converters, expression in self.converters:
            for convert in converters:
                values[index] = convert(values[index], expression, connection)
        return self.model.from_db(db, self.attnames, values)


@dataclass(frozen=True)
class _Statement:
    sql: str
    tables: dict[str, _Table]


def _tables(connection, models: dict[str, type[Model]]) -> tuple[list[str], dict[str, _Table]]:
    """The SELECT list over `models` (alias -> model) and each model's slice of the row."""
    quote = connection.ops.quote_name
    columns: list[str] = []
    tables: dict[str, _Table] = {}
    for alias, model in models.items():
        fields = model._meta.concrete_fields
        converters = []
        for index, field in enumerate(fields):
            expression = field.get_col(alias)
            found = connection.ops.get_db_converters(expression) + expression.get_db_converters(connection)
            if found:
                converters.append((index, tuple(found), expression))
        tables[alias] = _Table(model, alias, len(columns), tuple(f.attname for f in fields), tuple(converters))
        columns += [f"{alias}.{quote(field.column)}" for field in fields]
    return columns, tables


@functools.cache
def _pages_statement(db: str, *, showing: bool = False) -> _Statement:
    """The pages with participant and study; `showing`: the page at a position is marked shown first."""
    connection = connections[db]
    quote = connection.ops.quote_name
    columns, tables = _tables(connection, {"a": Assignment, "p": Participant, "s": Study})
    page_columns = len(Assignment._meta.concrete_fields)
    shown_at = columns.index(f"a.{quote('shown_at')}")
    # The participant and the study are the same on every page's row: sent with the first page only, so
    # the driver converts their 60-odd columns (timestamps, JSON) once rather than k times.
    first_only = [f"CASE WHEN row_number() OVER pages = 1 THEN {column} END" for column in columns[page_columns:]]
    pages = (
        f"FROM {quote(Assignment._meta.db_table)} a "
        f"JOIN {quote(Participant._meta.db_table)} p ON p.{quote('id')} = a.{quote('participant_id')} "
        f"JOIN {quote(Study._meta.db_table)} s ON s.{quote('id')} = p.{quote('study_id')} "
    )
    where = (
        f"WHERE a.{quote('participant_id')} = %s AND s.{quote('slug')} = %s "
        f"WINDOW pages AS (ORDER BY a.{quote('position')}) ORDER BY a.{quote('position')}"
    )
    if not showing:
        return _Statement(f"SELECT {', '.join(columns[:page_columns] + first_only)} {pages}{where}", tables)
    # One statement on PostgreSQL: its SELECT sees the rows as before the UPDATE, so the time just
    # written comes from the UPDATE's RETURNING.
    columns[shown_at] = f"COALESCE(a.{quote('shown_at')}, shown.{quote('shown_at')})"
    select = f"SELECT {', '.join(columns[:page_columns] + first_only)} {pages}"
    return _Statement(
        f"WITH shown AS ({_mark_shown_sql(connection)} RETURNING {quote('id')}, {quote('shown_at')}) "
        f"{select}LEFT JOIN shown ON shown.{quote('id')} = a.{quote('id')} {where}",
        tables,
    )


def _mark_shown_sql(connection) -> str:
    """The current page marked shown now, when it is at the position asked for and not shown before.

    Parameters: the time, the participant, the position, the study's slug. Only the first open page is
    the current one: a later page asked for (a typed address) is not shown, the judge is sent back.
    """
    quote = connection.ops.quote_name
    table, reserved = quote(Assignment._meta.db_table), f"'{Assignment.Status.RESERVED}'"
    return (
        f"UPDATE {table} SET {quote('shown_at')} = %s WHERE {quote('participant_id')} = %s "
        f"AND {quote('position')} = %s AND {quote('status')} = {reserved} AND {quote('shown_at')} IS NULL "
        f"AND {quote('participant_id')} IN (SELECT p.{quote('id')} FROM {quote(Participant._meta.db_table)} p "
        f"JOIN {quote(Study._meta.db_table)} s ON s.{quote('id')} = p.{quote('study_id')} WHERE s.{quote('slug')} = %s) "
        f"AND NOT EXISTS (SELECT 1 FROM {table} earlier WHERE earlier.{quote('participant_id')} = "
        f"{table}.{quote('participant_id')} AND earlier.{quote('status')} = {reserved} "
        f"AND earlier.{quote('position')} < {table}.{quote('position')})"
    )


@functools.cache
def _participant_statement(db: str, *, locked: bool, with_study: bool = True) -> _Statement:
    """The participant with their study: of the study named (`slug`), or locked for an update (by id alone)."""
    connection = connections[db]
    quote = connection.ops.quote_name
    columns, tables = _tables(connection, {"p": Participant, "s": Study} if with_study else {"p": Participant})
    sql = f"SELECT {', '.join(columns)} FROM {quote(Participant._meta.db_table)} p "
    if with_study:
        sql += f"JOIN {quote(Study._meta.db_table)} s ON s.{quote('id')} = p.{quote('study_id')} "
    sql += f"WHERE p.{quote('id')} = %s"
    if not locked:
        return _Statement(f"{sql} AND s.{quote('slug')} = %s", tables)
    # The participant's row only, as `select_for_update(of=("self",))`: the study's row stays free.
    if connection.features.has_select_for_update_of:
        return _Statement(f"{sql} FOR UPDATE OF p", tables)
    return _Statement(f"{sql} FOR UPDATE" if connection.features.has_select_for_update else sql, tables)


def _rows(statement: _Statement, db: str, params: list) -> list[tuple]:
    with connections[db].cursor() as cursor:
        cursor.execute(statement.sql, params)
        return cursor.fetchall()


def pages_with_participant(participant_id: int, slug: str, *, showing: int | None = None) -> list[Assignment]:
    """The participant's pages in position order, with the one participant and study (vignettes: live_content).

    `showing`: the position a judging page is about to show; if it is the current page, first shown now,
    its time of first showing is written (seconds on a page count from then), in the same statement on
    PostgreSQL.
    """
    db = Assignment.objects.db
    connection = connections[db]
    params: list = [participant_id, slug]
    if showing is None:
        statement = _pages_statement(db)
    elif connection.vendor == "postgresql":
        statement = _pages_statement(db, showing=True)
        params = [timezone.now(), participant_id, showing, slug, *params]
    else:  # no UPDATE inside WITH (SQLite): the same two steps, one after the other
        statement = _pages_statement(db)
        with connection.cursor() as cursor:
            cursor.execute(_mark_shown_sql(connection), [timezone.now(), participant_id, showing, slug])
    pages: list[Assignment] = []
    participant: Participant | None = None
    for row in _rows(statement, db, params):
        participant = participant or _with_study(statement, row, db, connection)  # the first row's
        page = cast(Assignment, statement.tables["a"].build(row, db, connection))
        Assignment.participant.field.set_cached_value(page, participant)
        pages.append(page)
    return pages


def _with_study(statement: _Statement, row: Sequence, db: str, connection) -> Participant:
    """The row's participant, with the row's study cached on it (no query when `participant.study` is read)."""
    participant = cast(Participant, statement.tables["p"].build(row, db, connection))
    Participant.study.field.set_cached_value(participant, statement.tables["s"].build(row, db, connection))
    return participant


def _participant(db: str, statement: _Statement, params: list) -> Participant | None:
    rows = _rows(statement, db, params)
    return _with_study(statement, rows[0], db, connections[db]) if rows else None


def participant_with_study(participant_id: int, slug: str) -> Participant | None:
    """The participant of this study with the study itself, or None."""
    db = Participant.objects.db
    return _participant(db, _participant_statement(db, locked=False), [participant_id, slug])


def locked_participant(participant_id: int, study: Study | None = None) -> Participant:
    """The participant with their study, their row locked until the transaction ends (call inside one).

    `study`: the participant's study as the page read it already, attached rather than read again (the
    lock is the participant's alone: the study's row was never locked, and a live study does not change).
    """
    db = Participant.objects.db
    if study is None:
        found = _participant(db, _participant_statement(db, locked=True), [participant_id])
    else:
        statement = _participant_statement(db, locked=True, with_study=False)
        rows = _rows(statement, db, [participant_id])
        found = cast(Participant, statement.tables["p"].build(rows[0], db, connections[db])) if rows else None
        if found is not None:
            if found.study_id != study.pk:
                raise ValueError(f"Participant {participant_id} is not of study {study.pk}.")
            Participant.study.field.set_cached_value(found, study)
    if found is None:
        raise Participant.DoesNotExist(f"No participant {participant_id}.")
    return found


def locked_again(participant: Participant) -> Participant:
    """`participant` read again under their row lock; their study, when read already, is kept, not read again."""
    study = participant.study if Participant.study.is_cached(participant) else None
    return locked_participant(participant.pk, study)


@dataclass(frozen=True)
class EntryRead:
    """What the entry page reads in one statement: the study, its participants of one PROLIFIC_PID, the
    one this browser is, and whether a new arrival could still get the study's k vignettes."""

    study: Study
    pid: str | None
    participants: tuple[Participant, ...]  # of `pid`
    resuming: Participant | None  # the participant of the study whose id this browser holds
    has_room: bool

    def of_pid(self, pid: str) -> list[Participant] | None:
        """The study's participants of `pid` (None when `pid` is not the one read)."""
        return list(self.participants) if pid == self.pid else None


@functools.cache
def _entry_statement(db: str) -> _Statement:
    connection = connections[db]
    quote = connection.ops.quote_name
    columns, tables = _tables(connection, {"s": Study, "p": Participant, "b": Participant})
    # As allocation's `has_room`: at least k vignettes still have a cell with room.
    room = (
        f"(SELECT COUNT(DISTINCT c.{quote('vignette_id')}) FROM {quote(Cell._meta.db_table)} c "
        f"WHERE c.{quote('study_id')} = s.{quote('id')} AND {cell_room_sql(connection, 'c')})"
        f" >= s.{quote('vignettes_per_participant')}"
    )
    participant, study_id = quote(Participant._meta.db_table), quote("study_id")
    # Two joins, each over its own index (one OR would scan the table): by PROLIFIC_PID, and by the browser's id.
    sql = (
        f"SELECT {', '.join(columns)}, {room} FROM {quote(Study._meta.db_table)} s "
        f"LEFT JOIN {participant} p ON p.{study_id} = s.{quote('id')} AND p.{quote('prolific_pid')} = %s "
        f"LEFT JOIN {participant} b ON b.{study_id} = s.{quote('id')} AND b.{quote('id')} = %s "
        f"WHERE s.{quote('slug')} = %s"
    )
    return _Statement(sql, tables)


def entry_read(slug: str, *, pid: str | None, participant_id: int | None) -> EntryRead | None:
    """The study named with its participants of `pid` and the one `participant_id` (None: no such study)."""
    db = Study.objects.db
    statement, connection = _entry_statement(db), connections[db]
    rows = _rows(statement, db, [pid, participant_id, slug])
    if not rows:
        return None
    study = cast(Study, statement.tables["s"].build(rows[0], db, connection))

    def participant(alias: str, row: Sequence) -> Participant | None:
        table = statement.tables[alias]
        if row[table.start + table.attnames.index("id")] is None:
            return None  # no row joined
        found = cast(Participant, table.build(row, db, connection))
        Participant.study.field.set_cached_value(found, study)
        return found

    theirs = tuple(found for row in rows if (found := participant("p", row)) is not None)
    return EntryRead(study, pid, theirs, participant("b", rows[0]), bool(rows[0][-1]))
