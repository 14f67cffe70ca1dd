"""The allocation's statements, written once per process from the models' fields (docs/allocation.md).

One of the two places the judging path writes SQL by hand (the other: page_record.py), because the ORM
cannot give the guarantee: cells locked `FOR UPDATE SKIP LOCKED` and, on PostgreSQL, their places reserved
and the pages stored in one statement (tests/surveys/test_allocation.py runs them on PostgreSQL and on
SQLite, where they run as separate statements in one transaction).

An arrival's pages cost three statements: the study's cells with room are read, the few best are locked,
and their places are reserved with the pages stored in one statement (two on SQLite, which has no `WITH`
that writes). Through the ORM each was compiled again on every arrival and
every locked cell built as a Cell object, which together cost the web process more CPU than the database
took to run them. Here each statement's SQL is composed once per database alias (and number of cells),
rows come back as tuples, and the conditions are the ORM's: a cell has room while `CELL_HAS_ROOM`
(surveys/models/judging.py), compiled into every statement that reserves (docs/architecture.md).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from django.db import connections

from ..models import Assignment, Cell
from ..models.judging import cell_room_sql


class Room(NamedTuple):
    """A cell with room, as ranking reads it."""

    pk: int
    vignette_id: int
    target: int
    fill: int


class LockedCell(NamedTuple):
    """A cell with room locked for this arrival: what a page is made of."""

    pk: int
    vignette_id: int
    target: int
    fill: int
    answer_a_id: int
    answer_b_id: int
    a_first_count: int


def _names(db: str) -> tuple:
    connection = connections[db]
    return connection, connection.ops.quote_name, connection.ops.quote_name(Cell._meta.db_table)


@functools.cache
def _with_room(db: str, study: str = "%s") -> str:
    """The condition of the study's (placeholder `study`) cells with room."""
    connection, quote, _ = _names(db)
    return f"{quote('study_id')} = {study} AND {cell_room_sql(connection)}"


@functools.cache
def _rooms_sql(db: str, *, locked_of: int = 0, wait: bool = False) -> str:
    """The study's cells with room (by id); `locked_of`: only those of that many ids, locked."""
    connection, quote, table = _names(db)
    fields = ["id", "vignette_id", "target"]
    if locked_of:
        fields += ["completed", "reserved", "answer_a_id", "answer_b_id", "a_first_count"]
    columns = ", ".join(quote(field) for field in fields)
    if not locked_of:
        columns += f", {quote('completed')} + {quote('reserved')}"
    sql = f"SELECT {columns} FROM {table} WHERE {_with_room(db)}"
    if locked_of:
        sql += f" AND {quote('id')} IN ({', '.join(['%s'] * locked_of)})"
    sql += f" ORDER BY {quote('id')}"
    if locked_of and connection.features.has_select_for_update:
        skip = not wait and connection.features.has_select_for_update_skip_locked
        sql += " FOR UPDATE SKIP LOCKED" if skip else " FOR UPDATE"
    return sql


def lock_last_places(key: int, study_id: int) -> None:
    """PostgreSQL's advisory lock (key, study) until the transaction ends: the last places, one arrival at a time."""
    with connections[Cell.objects.db].cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [key, study_id])


def _rows(db: str, sql: str, params: list) -> list[tuple]:
    with connections[db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def cells_with_room(study_id: int) -> list[Room]:
    """The study's cells with room now, by id (committed state, no locks)."""
    db = Cell.objects.db
    return [Room(*row) for row in _rows(db, _rooms_sql(db), [study_id])]


def lock_cells_with_room(study_id: int, ids: list[int], *, wait: bool) -> list[LockedCell]:
    """Those of `ids` that still have room, locked until the transaction ends, by id; a cell another
    arrival holds is skipped, unless `wait`."""
    if not ids:
        return []
    db = Cell.objects.db
    rows = _rows(db, _rooms_sql(db, locked_of=len(ids), wait=wait), [study_id, *ids])
    return [
        LockedCell(pk, vignette, target, done + held, a, b, shown)
        for pk, vignette, target, done, held, a, b, shown in rows
    ]


@functools.cache
def _reserve_sql(db: str, count: int) -> str:
    _, quote, table = _names(db)
    reserved = quote("reserved")
    ids = ", ".join(f"%(cell{n})s" for n in range(count))
    room = _with_room(db, "%(study)s")
    return f"UPDATE {table} SET {reserved} = {reserved} + 1 WHERE {room} AND {quote('id')} IN ({ids})"


def reserve_and_insert(study_id: int, cell_ids: list[int], pages: list[Assignment]) -> list[Assignment] | None:
    """A place reserved in each of the cells `cell_ids` and `pages` stored; None when a cell had no room left
    (then roll the transaction back: the pages may be stored). On PostgreSQL one statement does both."""
    db = Cell.objects.db
    connection = connections[db]
    reserve = {"study": study_id, **{f"cell{n}": pk for n, pk in enumerate(cell_ids)}}
    if connection.vendor != "postgresql":  # no data-modifying WITH
        with connection.cursor() as cursor:
            cursor.execute(_reserve_sql(db, len(cell_ids)), reserve)
            taken = cursor.rowcount
        return insert_pages(pages) if taken == len(cell_ids) else None
    sql, params = _insert(db, pages)
    quote = connection.ops.quote_name
    together = (
        f"WITH taken AS ({_reserve_sql(db, len(cell_ids))} RETURNING {quote('id')}) {sql}, (SELECT COUNT(*) FROM taken)"
    )
    with connection.cursor() as cursor:
        cursor.execute(together, {**params, **reserve})
        rows = cursor.fetchall()
    if len(rows) != len(pages) or any(taken != len(cell_ids) for _, taken in rows):
        return None
    return _stored(pages, [pk for pk, _ in rows], db)


@functools.cache
def _insert_sql(db: str, count: int, shared: frozenset[int]) -> str:
    """The INSERT of `count` pages; the columns numbered in `shared` take one value for every page.

    Named, so a value all pages share is sent once: psycopg caches the conversion of a statement of up
    to 50 parameters only, and k pages of 13 columns were 65.
    """
    connection, quote, _ = _names(db)
    columns = ", ".join(quote(field.column) for field in _PAGE_FIELDS)
    rows = ", ".join(
        "(" + ", ".join(f"%(c{i})s" if i in shared else f"%(r{n}c{i})s" for i in range(len(_PAGE_FIELDS))) + ")"
        for n in range(count)
    )
    sql = f"INSERT INTO {quote(Assignment._meta.db_table)} ({columns}) VALUES {rows}"
    if connection.features.can_return_rows_from_bulk_insert:
        sql += f" RETURNING {quote(Assignment._meta.pk.column)}"
    return sql


_PAGE_FIELDS = tuple(field for field in Assignment._meta.concrete_fields if not field.primary_key)


def _insert(db: str, pages: list[Assignment]) -> tuple[str, dict]:
    connection = connections[db]
    rows = [[field.pre_save(page, True) for field in _PAGE_FIELDS] for page in pages]
    shared = frozenset(i for i, value in enumerate(rows[0]) if all(row[i] == value for row in rows))
    params = {f"c{i}": _PAGE_FIELDS[i].get_db_prep_save(rows[0][i], connection) for i in shared}
    params.update(
        (f"r{n}c{i}", _PAGE_FIELDS[i].get_db_prep_save(value, connection))
        for n, row in enumerate(rows)
        for i, value in enumerate(row)
        if i not in shared
    )
    return _insert_sql(db, len(pages), shared), params


def _stored(pages: list[Assignment], ids: list[int], db: str) -> list[Assignment]:
    for page, pk in zip(pages, ids, strict=True):
        page.pk = pk
        page._state.adding, page._state.db = False, db
    return pages


def insert_pages(pages: list[Assignment]) -> list[Assignment]:
    """Store new pages as `bulk_create` does (one INSERT); returns them with their ids, as stored."""
    db = Assignment.objects.db
    connection = connections[db]
    sql, params = _insert(db, pages)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if connection.features.can_return_rows_from_bulk_insert:
            return _stored(pages, [row[0] for row in cursor.fetchall()], db)
    # No RETURNING: read them back.
    return list(Assignment.objects.filter(participant_id=pages[0].participant_id).order_by("position"))
