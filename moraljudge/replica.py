"""Heavy reads (refit, exports) from a read replica, when DATABASE_REPLICA_URL configures one.

Code marks those reads with `reads_from_replica`; ReplicaRouter (installed only with a replica) sends
reads made inside it to the `replica` database. Writes, and every read outside it, stay on `default`,
so a page never reads behind its own write.
"""

import functools
import inspect
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings

_on_replica: ContextVar[bool] = ContextVar("reads_from_replica", default=False)


@contextmanager
def _replica_reads():
    previous = _on_replica.get()
    _on_replica.set(True)
    try:
        yield
    finally:
        # Set back by value, not by token: a streamed response may be resumed in a copied context.
        _on_replica.set(previous)


def reads_from_replica(function):
    """Decorate a function (or a generator function, for streamed rows) whose reads may lag a little."""
    if inspect.isgeneratorfunction(function):

        @functools.wraps(function)
        def rows(*args, **kwargs):
            # Set only while the generator runs, so a streamed export keeps reading the replica to the end.
            with _replica_reads():
                yield from function(*args, **kwargs)

        return rows

    @functools.wraps(function)
    def call(*args, **kwargs):
        with _replica_reads():
            return function(*args, **kwargs)

    return call


class ReplicaRouter:
    def db_for_read(self, model, **hints):
        return "replica" if _on_replica.get() and "replica" in settings.DATABASES else None

    def db_for_write(self, model, **hints):
        return "default"

    def allow_relation(self, obj1, obj2, **hints):
        return True  # the replica is a copy of default: the same rows

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == "default"  # the replica follows the primary's schema by replication
