"""Allocation: which cells a judge gets, and the sweep that takes back reservations that ran out.

The invariant (docs/architecture.md): a cell's fill (completed + reserved) never exceeds its target, whatever
the number of simultaneous arrivals. Every counter change here is one conditional UPDATE whose WHERE
clause carries the check, and a cell is picked under `SELECT … FOR UPDATE SKIP LOCKED`, so two
arrivals never wait on each other's cells (no deadlocks) and never read-then-write. The database's
`cell_never_overfilled` check constraint is the last guard. Which events give places back, and the
giving back itself, are the participant lifecycle's (participation.py).
"""

import random
import time
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F, Sum
from django.utils import timezone

from ..models import Assignment, Cell, Participant, Study
from .participation import Event, apply_event

ATTEMPTS = 30  # tries when other arrivals hold the free cells' locks for a moment


def allocate(*, participant: Participant, now: datetime | None = None) -> list[Assignment]:
    """Reserve k cells on k distinct vignettes for `participant`; [] when the study is full.

    A participant who already holds assignments gets them back unchanged (a reload, a double
    submit). Vignettes with the most assignments still missing come first, and within each the
    least-filled cell; ties are broken at random. A preview participant gets cells without
    reserving them: nothing they do counts.
    """
    now = now or timezone.now()
    release_expired(now=now, study_id=participant.study_id)
    for attempt in range(ATTEMPTS):
        assignments = _allocate_once(participant=participant, now=now)
        if assignments is not None:
            return assignments
        # Not enough cells free of other arrivals' locks: give ours back (rolled back) and try again,
        # unless the study has no room left at all.
        if not _has_room(study_id=participant.study_id, k=participant.study.vignettes_per_participant):
            return []
        time.sleep(random.uniform(0.002, 0.01) * (attempt + 1))
    return []


def _allocate_once(*, participant: Participant, now: datetime) -> list[Assignment] | None:
    """One try in one transaction: the assignments, [] when there is nothing to take, None to retry."""
    with transaction.atomic():
        participant = Participant.objects.select_for_update(of=("self",)).select_related("study").get(pk=participant.pk)
        existing = list(participant.assignments.order_by("position"))
        if existing:
            return existing
        study = participant.study
        cells = _reserve_cells(study=study, k=study.vignettes_per_participant, preview=participant.is_preview)
        if len(cells) < study.vignettes_per_participant:
            transaction.set_rollback(True)
            return [] if participant.is_preview else None
        random.shuffle(cells)  # page order: no vignette always comes first
        ranks = _vignette_ranks(study)
        expires_at = now + timedelta(minutes=study.reservation_minutes)
        assignments = []
        for position, cell in enumerate(cells, start=1):
            a_first = _a_first(study=study, cell=cell, rank=ranks[cell.vignette_id], preview=participant.is_preview)
            first, second = (cell.answer_a_id, cell.answer_b_id) if a_first else (cell.answer_b_id, cell.answer_a_id)
            assignments.append(
                Assignment(
                    participant=participant,
                    cell=cell,
                    vignette_id=cell.vignette_id,
                    first_answer_id=first,
                    second_answer_id=second,
                    position=position,
                    counts_toward_cell=not participant.is_preview,
                    reserved_at=now,
                    expires_at=expires_at,
                )
            )
        Assignment.objects.bulk_create(assignments)
        return list(participant.assignments.order_by("position"))


def has_room(*, study: Study) -> bool:
    """Whether a new arrival could still get the study's k vignettes (advisory: `allocate` decides)."""
    return _has_room(study_id=study.pk, k=study.vignettes_per_participant)


def _has_room(*, study_id: int, k: int) -> bool:
    """Whether at least k vignettes still have a cell with room (committed state, no locks)."""
    with_room = Cell.objects.filter(study_id=study_id, completed__lt=F("target") - F("reserved")).order_by()
    return with_room.values("vignette_id").distinct().count() >= k


def _reserve_cells(*, study: Study, k: int, preview: bool) -> list[Cell]:
    candidates = Cell.objects.filter(study=study)
    if not preview:  # a preview may look at any cell, even in a full study
        candidates = candidates.filter(completed__lt=F("target") - F("reserved"))
    missing = candidates.values("vignette_id").annotate(missing=Sum(F("target") - F("completed") - F("reserved")))
    order = sorted(missing, key=lambda row: (-row["missing"], random.random()))
    cells: list[Cell] = []
    for row in order:
        if len(cells) == k:
            break
        cell = _take_least_filled(study=study, vignette_id=row["vignette_id"], preview=preview)
        if cell is not None:
            cells.append(cell)
    return cells


def _take_least_filled(*, study: Study, vignette_id: int, preview: bool) -> Cell | None:
    """Lock and reserve the least-filled cell of a vignette that has room, or None."""
    if preview:
        return _least_filled(list(Cell.objects.filter(study=study, vignette_id=vignette_id).order_by("id")))
    with_room = Cell.objects.filter(study=study, vignette_id=vignette_id, completed__lt=F("target") - F("reserved"))
    for _ in range(3):  # another arrival may take the last place between our lock and update
        candidates = list(
            with_room.order_by(F("completed") + F("reserved"), "?").select_for_update(skip_locked=True)[:1]
        )
        if not candidates:
            return None
        cell = candidates[0]
        taken = Cell.objects.filter(pk=cell.pk, completed__lt=F("target") - F("reserved")).update(
            reserved=F("reserved") + 1
        )
        if taken:
            return cell
    return None


def _least_filled(cells: list[Cell]) -> Cell | None:
    if not cells:
        return None
    least = min(cell.fill for cell in cells)
    return random.choice([cell for cell in cells if cell.fill == least])


def _vignette_ranks(study: Study) -> dict[int, int]:
    """1 for the study's first vignette (by position), 2 for the second, …"""
    ids = study.vignettes.order_by("position", "id").values_list("id", flat=True)
    return {vignette_id: rank for rank, vignette_id in enumerate(ids, start=1)}


def _a_first(*, study: Study, cell: Cell, rank: int, preview: bool) -> bool:
    """Whether the cell's answer_a (the earlier system) is shown first, by the study's order rule."""
    if study.order_rule == Study.OrderRule.BALANCED_PER_CELL:
        if preview:
            return random.random() < 0.5
        shown = Assignment.objects.filter(cell=cell).count()  # the cell row is locked: no race
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
