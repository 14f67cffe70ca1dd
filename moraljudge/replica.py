"""Heavy reads (refit, exports) from a read replica, when DATABASE_REPLICA_URL configures one.

Code marks those reads with `reads_from_replica`; ReplicaRouter (installed only with a replica) sends
reads made inside it to the `replica` database. Writes, and every read outside it, stay on `default`,
so a page never reads behind its own write. Raw SQL (a cursor, COPY) is not routed: it opens
`connections[analysis_database()]` itself.
"""

import functools
import inspect
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import DEFAULT_DB_ALIAS, connections

REPLICA = "replica"

_on_replica: ContextVar[bool] = ContextVar("reads_from_replica", default=False)


def analysis_database() -> str:
    """The database alias that refits and exports read: the replica when one is configured."""
    return REPLICA if REPLICA in connections else DEFAULT_DB_ALIAS


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
            # Set while the generator's own code runs, to its last row, and never while its caller holds a row:
            # the code consuming a streamed export reads the primary between rows.
            with _replica_reads():
                inner = function(*args, **kwargs)
            try:
                while True:
                    with _replica_reads():
                        try:
                            row = next(inner)
                        except StopIteration:
                            return
                    yield row
            finally:
                with _replica_reads():
                    inner.close()

        return rows

    @functools.wraps(function)
    def call(*args, **kwargs):
        with _replica_reads():
            return function(*args, **kwargs)

    return call


class ReplicaRouter:
    def db_for_read(self, model, **hints):
        return analysis_database() if _on_replica.get() else None

    def db_for_write(self, model, **hints):
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        return True  # the replica is a copy of default: the same rows

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == DEFAULT_DB_ALIAS  # the replica follows the primary's schema by replication
