"""A query per block of ids read on PostgreSQL by two connections that share one snapshot.

A refit's reading is mostly PostgreSQL building each block's arrays; on one connection this process waits
while it does, and the database waits while this process parses. With a second connection that imports the
first one's snapshot (`pg_export_snapshot()`, `SET TRANSACTION SNAPSHOT`: both see the same rows), block k
is read by connection k % 2, each on a thread of its own, and handed over in block order: two backends
build arrays while this process parses. Where a second connection cannot share the snapshot (inside a
caller's transaction, whose writes it could not see) the blocks are read on the one connection.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Generator, Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager

from psycopg import IsolationLevel, sql

# Connections reading blocks at once (the second shares the first one's snapshot); 1 reads on one.
READERS = 2
# Rows of arrays fetched per round trip, and waiting per reader: a few blocks of a few MB each.
FETCH_ROWS = 2
WAITING_ROWS = 2


@contextmanager
def block_readers(connection, *, own_transaction: bool) -> Iterator[list]:
    """The raw connections to read on, as this transaction of Django's `connection` sees the database: this
    one, and a second sharing its snapshot when the transaction is the reading's own (REPEATABLE READ)."""
    with ExitStack() as stack:
        readers = [connection.connection]
        if own_transaction and READERS > 1:
            second = _sharing_snapshot(connection)
            if second is not None:
                readers.append(stack.enter_context(second))
        yield readers


def read_blocks(readers: list, query: str, blocks: Sequence[int], params: Sequence) -> Generator[tuple]:
    """The rows of `query` (its first parameter the array of blocks, one row per block, in their order)
    for `blocks`, in block order, block k read by reader k % len(readers)."""
    if len(readers) == 1 or len(blocks) < 2:
        yield from _fetched(readers[0], query, list(blocks), params)
        return
    yield from _interleaved(readers, query, list(blocks), params)


def read_each(readers: list, queries: list[tuple[str, Sequence]]) -> list[tuple]:
    """The one row of each query, query k read by reader k % len(readers), the readers at once."""
    rows: list = [None] * len(queries)

    def read(k: int) -> None:
        for n in range(k, len(queries), len(readers)):
            with readers[k].cursor(name="read_each", binary=True) as cursor:  # Django's own cursors are not binary
                cursor.execute(*queries[n])
                rows[n] = cursor.fetchone()

    _on_threads(read, len(readers) if len(queries) > 1 else 1)
    return rows


def _on_threads(read, count: int) -> None:
    """read(0) .. read(count - 1) at once, each on a thread of its own (read(0) on this one); the first
    exception is raised once all have ended."""
    errors: list[BaseException] = []

    def guarded(k: int) -> None:
        try:
            read(k)
        except BaseException as exc:  # raised below, on the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(k,), daemon=True) for k in range(1, count)]
    for thread in threads:
        thread.start()
    guarded(0)
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


def _fetched(reader, query: str, blocks: list[int], params: Sequence) -> Generator[tuple]:
    with reader.cursor(name="judgment_blocks", binary=True) as cursor:
        cursor.itersize = FETCH_ROWS
        cursor.execute(query, [blocks, *params])
        yield from cursor


def _sharing_snapshot(connection):
    """A second connection in a transaction on this transaction's snapshot (PostgreSQL exports one on a
    primary and, since version 10, on a standby too), or None where it cannot be."""
    if connection.settings_dict["OPTIONS"].get("assume_role"):
        return None  # Django sets the role on its own connection only
    with connection.cursor() as cursor:  # not in a savepoint: a subtransaction cannot export its snapshot
        cursor.execute("SELECT pg_export_snapshot()")
        (snapshot,) = cursor.fetchone()
    return _second_connection(connection, snapshot)


@contextmanager
def _second_connection(connection, snapshot: str):
    reader = connection.Database.connect(**connection.get_connection_params())
    try:
        reader.isolation_level = IsolationLevel.REPEATABLE_READ
        reader.read_only = True
        reader.execute(sql.SQL("SET TRANSACTION SNAPSHOT {}").format(sql.Literal(snapshot)))
        yield reader
    finally:
        reader.close()  # its read-only transaction ends with it


_END = object()


def _interleaved(readers: list, query: str, blocks: list[int], params: Sequence) -> Generator[tuple]:
    """Block k read by reader k % len(readers) on a thread of its own; the rows taken in block order."""
    waiting: list[queue.Queue] = [queue.Queue(maxsize=WAITING_ROWS) for _ in readers]
    stop = threading.Event()

    def hand_over(k: int, item) -> bool:
        while not stop.is_set():
            try:
                waiting[k].put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read(k: int) -> None:
        try:
            with closing(_fetched(readers[k], query, blocks[k :: len(readers)], params)) as rows:
                for row in rows:
                    if not hand_over(k, row):
                        return
            hand_over(k, _END)
        except BaseException as exc:  # handed to the caller, which raises it
            hand_over(k, exc)

    threads = [threading.Thread(target=read, args=(k,), daemon=True) for k in range(len(readers))]
    for thread in threads:
        thread.start()
    try:
        for block in range(len(blocks)):
            row = waiting[block % len(readers)].get()
            if isinstance(row, BaseException):
                raise row
            if row is _END:
                raise RuntimeError("A block reader ended before its blocks did.")
            yield row
    finally:
        stop.set()
        for thread in threads:
            thread.join()
