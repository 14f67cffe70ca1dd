"""A participant's INSERT and UPDATEs, composed once per process.

Every judge's first request makes the INSERT, and their consent, pages and check each an UPDATE of
their row; through the ORM, compiling each (the fields matched, quoted and prepared, the save's
signals and checks) cost more CPU than sending it. Here the SQL is written once per database alias
(and, for an UPDATE, per set of fields) from the model's own fields, and each value is prepared as
the ORM prepares it (`pre_save`, `get_db_prep_save`); where something listens to a participant's
save, or the database cannot return the new id from the INSERT, the ORM does it instead.
"""

from __future__ import annotations

import functools
from typing import Any

from django.db import DatabaseError, connections, router
from django.db.models import Field
from django.db.models.signals import post_save, pre_save

from ..models import Participant


@functools.cache
def _insert(db: str) -> tuple[str, tuple[Field, ...]]:
    quote = connections[db].ops.quote_name
    fields = tuple(field for field in Participant._meta.concrete_fields if not field.primary_key)
    sql = (
        f"INSERT INTO {quote(Participant._meta.db_table)} ({', '.join(quote(field.column) for field in fields)}) "
        f"VALUES ({', '.join(['%s'] * len(fields))}) RETURNING {quote(Participant._meta.pk.column)}"
    )
    return sql, fields


def _listened() -> bool:
    return pre_save.has_listeners(Participant) or post_save.has_listeners(Participant)


def create_participant(**values: Any) -> Participant:
    """`Participant.objects.create(**values)`: the same row and object, and the same IntegrityError."""
    db = router.db_for_write(Participant)
    connection = connections[db]
    if _listened() or not connection.features.can_return_columns_from_insert:
        return Participant.objects.create(**values)
    participant = Participant(**values)
    sql, fields = _insert(db)
    params = [field.get_db_prep_save(field.pre_save(participant, True), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        participant.pk = cursor.fetchone()[0]
    participant._state.adding, participant._state.db = False, db
    return participant


@functools.cache
def _update(db: str, names: tuple[str, ...]) -> tuple[str, tuple[Field, ...]]:
    quote = connections[db].ops.quote_name
    by_name = {key: field for field in Participant._meta.concrete_fields for key in (field.name, field.attname)}
    fields = tuple(dict.fromkeys(by_name[name] for name in names))
    assignments = ", ".join(f"{quote(field.column)} = %s" for field in fields)
    sql = (
        f"UPDATE {quote(Participant._meta.db_table)} SET {assignments} WHERE {quote(Participant._meta.pk.column)} = %s"
    )
    return sql, fields


def save_fields(participant: Participant, names: list[str] | tuple[str, ...]) -> None:
    """`participant.save(update_fields=names)`: the same UPDATE, and the same error when the row is gone."""
    db = router.db_for_write(Participant, instance=participant)
    if _listened():
        participant.save(update_fields=names)
        return
    connection = connections[db]
    sql, fields = _update(db, tuple(names))
    params = [field.get_db_prep_save(field.pre_save(participant, False), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, participant.pk])
        if cursor.rowcount == 0:
            raise DatabaseError("Save with update_fields did not affect any rows.")
