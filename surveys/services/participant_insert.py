"""A new participant's INSERT, composed once per process.

Every judge's first request makes one, and through the ORM its compile (the fields matched, quoted and
prepared, the save's signals and checks) cost the entry page more than its composed read. Here the SQL
is written once per database alias from the model's own fields, and each value is prepared as the ORM
prepares it (`pre_save`, `get_db_prep_save`); where something listens to a participant's save, or the
database cannot return the new id from the INSERT, the ORM does it instead.
"""

from __future__ import annotations

import functools
from typing import Any

from django.db import connections, router
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


def create_participant(**values: Any) -> Participant:
    """`Participant.objects.create(**values)`: the same row and object, and the same IntegrityError."""
    db = router.db_for_write(Participant)
    connection = connections[db]
    listened = pre_save.has_listeners(Participant) or post_save.has_listeners(Participant)
    if listened or not connection.features.can_return_columns_from_insert:
        return Participant.objects.create(**values)
    participant = Participant(**values)
    sql, fields = _insert(db)
    params = [field.get_db_prep_save(field.pre_save(participant, True), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        participant.pk = cursor.fetchone()[0]
    participant._state.adding, participant._state.db = False, db
    return participant
