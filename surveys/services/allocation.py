"""Allocation: which cells a judge gets, and the sweep that takes back reservations that ran out.

The invariant (docs/architecture.md): a cell's fill (completed + reserved) never exceeds its target, whatever
the number of simultaneous arrivals. Every counter change here is one conditional UPDATE whose WHERE
clause carries the check, and cells are picked under `SELECT … FOR UPDATE SKIP LOCKED`, so two
arrivals never wait on each other's cells (no deadlocks) and never read-then-write. The database's
`cell_never_overfilled` check constraint is the last guard. Which events give places back, and the
giving back itself, are the participant lifecycle's (participation.py).
"""

import random
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Protocol, TypeVar

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from ..models import Assignment, Cell, Participant, Study
from .allocation_sql import (
    Room,
    cells_with_room,
    insert_pages,
    lock_cells_with_room,
    lock_last_places,
    reserve_and_insert,
)
from .live_content import content_of
from .participation import Event, apply_event, locked_again

T = TypeVar("T")


class _HasRoom(Protocol):
    """What ranking and choosing read of a cell: a stored Cell, or a row read without building one."""

    @property
    def pk(self) -> int: ...
    @property
    def vignette_id(self) -> int: ...
    @property
    def target(self) -> int: ...
    @property
    def fill(self) -> int: ...


class _PageCell(_HasRoom, Protocol):
    """What a page is made of: a stored Cell (a preview's), or a locked row (allocation_sql.LockedCell)."""

    @property
    def answer_a_id(self) -> int: ...
    @property
    def answer_b_id(self) -> int: ...
    @property
    def a_first_count(self) -> int: ...


C = TypeVar("C", bound=_HasRoom)


ATTEMPTS = 30  # tries when other arrivals hold the free cells' locks for a moment
SPARE_VIGNETTES = 2  # vignettes locked per place wanted: k of them may be held by other arrivals
CELLS_PER_VIGNETTE = 3  # the least-filled cells locked on each
# The last places of a study are chosen one arrival at a time (docs/allocation.md): from this many
# judges' worth of places left, an arrival takes the study's advisory lock LAST_PLACES_LOCK first.
LAST_PLACES_JUDGES = 25
LAST_PLACES_LOCK = 24_001  # the advisory lock's first key (the second is the study's id)


def allocate(*, participant: Participant, now: datetime | None = None) -> list[Assignment]:
    """Reserve k cells on k distinct vignettes for `participant`; [] when the study is full.

    A participant who already holds assignments gets them back unchanged (a reload, a double
    submit). Vignettes with the most assignments still missing come first, and within each the
    least-filled cell; ties are broken at random. A preview participant gets cells without
    reserving them: nothing they do counts.
    """
    now = now or timezone.now()

    def pages(locked: Participant) -> list[Assignment] | None:
        return list(locked.assignments.order_by("position")) or reserve_pages(participant=locked, now=now)

    return with_pages(participant=participant, attempt=pages, now=now) or []


def with_pages(*, participant: Participant, attempt: Callable[[Participant], T | None], now: datetime) -> T | None:
    """`attempt(participant)` in one transaction under the participant's row lock, until it gives a result.

    `attempt` reads the participant's row as locked and returns None when not enough cells were free
    of other arrivals' locks (its transaction is rolled back, and it is tried again) or when the
    study is full: then this returns None. Expired reservations are the sweep's, unless the study
    looks full: then this study's are taken back first.
    """
    study_id, k = participant.study_id, participant.study.vignettes_per_participant
    swept = False
    for try_number in range(ATTEMPTS):
        with transaction.atomic():
            locked = locked_again(participant)
            result = attempt(locked)
            if result is not None:
                return result
            transaction.set_rollback(True)
        if not _has_room(study_id=study_id, k=k):
            if swept or not release_expired(now=now, study_id=study_id):
                return None
            swept = True
            continue
        time.sleep(random.uniform(0.002, 0.01) * (try_number + 1))
    return None


def reserve_pages(*, participant: Participant, now: datetime) -> list[Assignment] | None:
    """Reserve and store the participant's k pages; None when not enough cells could be had.

    Call in a transaction under the participant's row lock, for a participant without pages; on None,
    roll it back (the pages may be stored already: on PostgreSQL one statement reserves and stores).
    """
    study = participant.study
    k = study.vignettes_per_participant
    cells = list(_chosen_cells(study=study, k=k, preview=participant.is_preview))
    if len(cells) < k:
        return None
    random.shuffle(cells)  # page order: no vignette always comes first
    ranks = content_of(study).vignette_ranks
    expires_at = now + timedelta(minutes=study.reservation_minutes)
    assignments = []
    for position, cell in enumerate(cells, start=1):
        a_first = _a_first(study=study, cell=cell, rank=ranks[cell.vignette_id], preview=participant.is_preview)
        first, second = (cell.answer_a_id, cell.answer_b_id) if a_first else (cell.answer_b_id, cell.answer_a_id)
        assignments.append(
            Assignment(
                participant=participant,
                cell_id=cell.pk,
                vignette_id=cell.vignette_id,
                first_answer_id=first,
                second_answer_id=second,
                position=position,
                counts_toward_cell=not participant.is_preview,
                reserved_at=now,
                expires_at=expires_at,
            )
        )
    if participant.is_preview:
        return insert_pages(assignments)
    # Under the locks the room is there; the condition is kept for databases without row locks.
    return reserve_and_insert(study.pk, [cell.pk for cell in cells], assignments)


def has_room(*, study: Study) -> bool:
    """Whether a new arrival could still get the study's k vignettes (advisory: `allocate` decides)."""
    return _has_room(study_id=study.pk, k=study.vignettes_per_participant)


def _has_room(*, study_id: int, k: int) -> bool:
    """Whether at least k vignettes still have a cell with room (committed state, no locks)."""
    with_room = Cell.objects.filter(study_id=study_id).with_room().order_by()
    return with_room.values("vignette_id").distinct().count() >= k


def _chosen_cells(*, study: Study, k: int, preview: bool) -> Sequence[_PageCell]:
    """k cells on k distinct vignettes, most-missing vignette first, each its least-filled cell, locked.

    Two statements whatever k: the cells with room are read, the few best of the leading vignettes
    are locked together (`FOR UPDATE SKIP LOCKED`: arrivals never wait on each other, and a locked
    row is read as it is now), and the choice is made here among those (`reserve_pages` reserves them).
    """
    if preview:  # a preview may look at any cell, even in a full study, and reserves nothing
        every = list(Cell.objects.filter(study=study).order_by("id"))
        return _choose(every, _ranked_vignettes(every), k)
    read = cells_with_room(study.pk)
    one_at_a_time = _last_places(read, k) and connection.vendor == "postgresql"
    if one_at_a_time:
        # The last places: arrivals choose one after another, each from the counts as they are now
        # (docs/allocation.md). Released at commit; SQLite serialises its writers anyway.
        lock_last_places(LAST_PLACES_LOCK, study.pk)
        read = cells_with_room(study.pk)  # a fresh read, under the lock
    order = _ranked_vignettes(read)[: SPARE_VIGNETTES * k]
    wanted = [cell.pk for vignette in order for cell in _least_filled_first(read, vignette)[:CELLS_PER_VIGNETTE]]
    # One at a time, a cell's lock is only ever held for a moment by a page being closed: wait for it.
    locked = lock_cells_with_room(study.pk, wanted, wait=one_at_a_time)
    return _choose(locked, order, k)


def _last_places(cells_with_room: list[Room], k: int) -> bool:
    """Whether the study is down to its last LAST_PLACES_JUDGES judges' places."""
    return sum(cell.target - cell.fill for cell in cells_with_room) <= LAST_PLACES_JUDGES * k


def _ranked_vignettes(cells: "list[C]") -> list[int]:
    """Vignette ids, the most places missing first, ties at random."""
    missing: dict[int, int] = {}
    for cell in cells:
        missing[cell.vignette_id] = missing.get(cell.vignette_id, 0) + cell.target - cell.fill
    return sorted(missing, key=lambda vignette: (-missing[vignette], random.random()))


def _least_filled_first(cells: "list[C]", vignette_id: int) -> "list[C]":
    return sorted((c for c in cells if c.vignette_id == vignette_id), key=lambda c: (c.fill, random.random()))


def _choose(cells: "list[C]", order: list[int], k: int) -> "list[C]":
    """The least-filled of `cells` on each of the first k vignettes of `order` that has one."""
    chosen = []
    for vignette in order:
        mine = _least_filled_first(cells, vignette)
        if mine:
            chosen.append(mine[0])
        if len(chosen) == k:
            break
    return chosen


def _a_first(*, study: Study, cell: _PageCell, rank: int, preview: bool) -> bool:
    """Whether the cell's answer_a (the earlier system) is shown first, by the study's order rule."""
    if study.order_rule == Study.OrderRule.BALANCED_PER_CELL:
        if preview:
            return random.random() < 0.5
        shown = Assignment.objects.filter(cell_id=cell.pk).count()  # the cell row is locked: no race
        a_first = cell.a_first_count * 2 <= shown
        if a_first:
            Cell.objects.filter(pk=cell.pk).update(a_first_count=F("a_first_count") + 1)
        return a_first
    return rank % 2 == 1  # the method's: one order on odd vignettes, the reverse on even


def release_expired(*, now: datetime | None = None, study_id: int | None = None) -> int:
    """The sweep: participants whose reservations ran out lose them (status expired).

    Their completed pages are given back too: a participant who never finishes gives no valid
    judgments. Returns how many places were given back.
    """
    now = now or timezone.now()
    expired = Assignment.objects.filter(status=Assignment.Status.RESERVED, expires_at__lte=now)
    if study_id is not None:
        expired = expired.filter(participant__study_id=study_id)
    released = 0
    for participant_id in set(expired.order_by().values_list("participant_id", flat=True)):
        with transaction.atomic():
            participant = Participant.objects.select_for_update().filter(pk=participant_id).order_by("pk").first()
            still = Assignment.objects.filter(
                participant_id=participant_id, status=Assignment.Status.RESERVED, expires_at__lte=now
            )
            if participant is None or not still.exists():
                continue  # finished or released meanwhile
            released += apply_event(participant=participant, event=Event.RESERVATION_EXPIRED).released
    return released
