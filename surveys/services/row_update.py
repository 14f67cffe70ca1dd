"""`instance.save(update_fields=…)` as one UPDATE written once per process (model, fields, database).

Every change of a judge's status is such a save (participation.apply_event), on the pages a judge sends.
Through the ORM each was a queryset built, filtered and compiled again, which cost more CPU than the
UPDATE itself. The values are prepared as the ORM prepares them (`pre_save`, `get_db_prep_save`); a model
with save signals listening, a value that is an expression, or a field with its own placeholder goes
through the ORM's save, so nothing the ORM would do is skipped.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from django.db import DatabaseError, connections, router, transaction
from django.db.models import Field, Model
from django.db.models.signals import post_save, pre_save


@functools.cache
def _update_sql(model: type[Model], names: tuple[str, ...], db: str) -> tuple[str, tuple[Field, ...]]:
    quote = connections[db].ops.quote_name
    fields = tuple(_concrete(model, name) for name in names)
    assignments = ", ".join(f"{quote(field.column)} = %s" for field in fields)
    pk = _concrete(model, "pk")
    return f"UPDATE {quote(model._meta.db_table)} SET {assignments} WHERE {quote(pk.column)} = %s", fields


def _concrete(model: type[Model], name: str) -> Field:
    field = model._meta.pk if name == "pk" else model._meta.get_field(name)
    if not isinstance(field, Field) or not field.concrete:
        raise ValueError(f"{model.__name__}.{name} is not a stored field.")
    return field


def _plain(model: type[Model], fields: tuple[Field, ...], values: list) -> bool:
    """Whether the ORM's save would do no more than this UPDATE."""
    if pre_save.has_listeners(model) or post_save.has_listeners(model):
        return False
    if any(hasattr(field, "get_placeholder") or field.primary_key for field in fields):
        return False
    return not any(hasattr(value, "resolve_expression") or hasattr(value, "prepare_database_save") for value in values)


def save_fields(instance: Model, fields: Iterable[str]) -> None:
    """Store `fields` of a stored instance, as `instance.save(update_fields=fields)` does."""
    model = type(instance)
    names = tuple(dict.fromkeys(fields))  # once each, in order
    db = instance._state.db or router.db_for_write(model, instance=instance)
    sql, model_fields = _update_sql(model, names, db)
    values = [field.pre_save(instance, False) for field in model_fields]
    if not _plain(model, model_fields, values):
        instance.save(update_fields=names)
        return
    connection = connections[db]
    params = [field.get_db_prep_save(value, connection) for field, value in zip(model_fields, values, strict=True)]
    with transaction.mark_for_rollback_on_error(using=db), connection.cursor() as cursor:
        cursor.execute(sql, [*params, instance.pk])
        if cursor.rowcount == 0:
            raise DatabaseError("Save with update_fields did not affect any rows.")
    instance._state.db, instance._state.adding = db, False
