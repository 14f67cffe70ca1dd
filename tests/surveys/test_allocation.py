"""Allocation: balance, order rules, expiry, giving cells back, and many arrivals at once."""

from collections import Counter
from datetime import timedelta
from functools import partial

import pytest
from django.db.models import F
from django.utils import timezone

from surveys.models import Assignment, Cell, Participant, Study
from surveys.services.allocation import allocate, release_expired
from surveys.services.lifecycle import go_live
from surveys.services.participation import Event, apply_event, give_back_places
from surveys.tasks import release_expired_reservations
from tests.conftest import at_once, make_study


def live_study(**kwargs):
    study = make_study(**kwargs)
    return go_live(study=study)


def arrive(study, n, *, preview=False):
    return Participant.objects.create(study=study, prolific_pid=f"{n:024x}", is_preview=preview)


def fills(study):
    return sorted(Cell.objects.filter(study=study).values_list("completed", "reserved", "target"))


@pytest.mark.django_db
def test_a_participant_gets_k_distinct_vignettes_with_one_reserved_cell_each():
    study = live_study(vignettes=4, vignettes_per_participant=3)
    assignments = allocate(participant=arrive(study, 1))
    assert [a.position for a in assignments] == [1, 2, 3]
    assert len({a.vignette_id for a in assignments}) == 3
    assert all(a.status == Assignment.Status.RESERVED and a.counts_toward_cell for a in assignments)
    assert sum(reserved for _, reserved, _ in fills(study)) == 3
    for a in assignments:
        assert {a.first_answer_id, a.second_answer_id} == {a.cell.answer_a_id, a.cell.answer_b_id}


@pytest.mark.django_db
def test_allocating_twice_returns_the_same_assignments_and_reserves_nothing_more():
    study = live_study(vignettes=3, vignettes_per_participant=2)
    participant = arrive(study, 1)
    first = allocate(participant=participant)
    again = allocate(participant=participant)
    assert [a.pk for a in first] == [a.pk for a in again]
    assert sum(reserved for _, reserved, _ in fills(study)) == 2


@pytest.mark.django_db
def test_cells_fill_evenly_and_a_full_study_allocates_nothing():
    # 3 systems -> 3 cells per vignette, 2 vignettes, R=2: 12 places, 2 per participant.
    study = live_study(vignettes=2, vignettes_per_participant=2, repetitions=2)
    for n in range(3):
        assert len(allocate(participant=arrive(study, n))) == 2
    assert {c.fill for c in Cell.objects.filter(study=study)} == {1}  # every cell once before any twice
    for n in range(3, 6):
        assert len(allocate(participant=arrive(study, n))) == 2
    assert {c.fill for c in Cell.objects.filter(study=study)} == {2}
    assert allocate(participant=arrive(study, 6)) == []
    assert not Assignment.objects.filter(participant__prolific_pid=f"{6:024x}").exists()


@pytest.mark.django_db
def test_vignettes_with_the_most_places_missing_are_chosen_first():
    study = live_study(vignettes=3, vignettes_per_participant=1, repetitions=3)
    v1, v2, v3 = study.vignettes.order_by("position")
    Cell.objects.filter(vignette__in=[v1, v3]).update(completed=2)
    assignment = allocate(participant=arrive(study, 1))[0]
    assert assignment.vignette_id == v2.pk


@pytest.mark.django_db
def test_the_methods_order_shows_one_order_on_odd_vignettes_and_the_reverse_on_even():
    study = live_study(vignettes=4, vignettes_per_participant=4)
    ranks = {v.pk: rank for rank, v in enumerate(study.vignettes.order_by("position"), start=1)}
    for assignment in allocate(participant=arrive(study, 1)):
        a_first = assignment.first_answer_id == assignment.cell.answer_a_id
        assert a_first == (ranks[assignment.vignette_id] % 2 == 1)


@pytest.mark.django_db
def test_balanced_per_cell_order_alternates_which_answer_comes_first():
    study = live_study(
        systems=("alpha", "beta"),
        vignettes=1,
        vignettes_per_participant=1,
        repetitions=4,
        order_rule="balanced-per-cell",
    )
    firsts = Counter()
    for n in range(4):
        assignment = allocate(participant=arrive(study, n))[0]
        firsts[assignment.first_answer_id == assignment.cell.answer_a_id] += 1
    assert firsts == {True: 2, False: 2}
    assert Cell.objects.get(study=study).a_first_count == 2


@pytest.mark.django_db
def test_a_preview_gets_pages_but_never_touches_the_cells():
    study = live_study(vignettes=2, vignettes_per_participant=2)
    assignments = allocate(participant=arrive(study, 1, preview=True))
    assert len(assignments) == 2
    assert not any(a.counts_toward_cell for a in assignments)
    assert all(completed == 0 and reserved == 0 for completed, reserved, _ in fills(study))


@pytest.mark.django_db
def test_expired_reservations_are_released_and_the_participant_marked_expired():
    study = live_study(vignettes=2, vignettes_per_participant=2, reservation_minutes=30)
    participant = arrive(study, 1)
    allocate(participant=participant)
    assert release_expired(now=timezone.now() + timedelta(minutes=29)) == 0
    assert release_expired(now=timezone.now() + timedelta(minutes=31)) == 2
    participant.refresh_from_db()
    assert participant.status == Participant.Status.EXPIRED
    assert all(completed == 0 and reserved == 0 for completed, reserved, _ in fills(study))
    assert set(participant.assignments.values_list("status", flat=True)) == {Assignment.Status.RELEASED}
    assert release_expired(now=timezone.now() + timedelta(minutes=31)) == 0


@pytest.mark.django_db
def test_an_arrival_releases_expired_reservations_before_taking_places():
    study = live_study(systems=("alpha", "beta"), vignettes=1, vignettes_per_participant=1, repetitions=1)
    late = arrive(study, 1)
    allocate(participant=late)
    assert allocate(participant=arrive(study, 2)) == []
    later = timezone.now() + timedelta(minutes=study.reservation_minutes + 1)
    assert len(allocate(participant=arrive(study, 3), now=later)) == 1
    late.refresh_from_db()
    assert late.status == Participant.Status.EXPIRED


@pytest.mark.django_db
def test_the_sweep_task_releases_what_has_expired():
    study = live_study(vignettes=2, vignettes_per_participant=2)
    participant = arrive(study, 1)
    allocate(participant=participant)
    Assignment.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert release_expired_reservations() == 2
    assert release_expired_reservations() == 0


@pytest.mark.django_db
def test_excluding_a_participant_gives_back_completed_pages_once_and_keeps_them_completed():
    study = live_study(vignettes=2, vignettes_per_participant=2)
    participant = arrive(study, 1)
    done, open_ = allocate(participant=participant)
    Assignment.objects.filter(pk=done.pk).update(status=Assignment.Status.COMPLETED)
    Cell.objects.filter(pk=done.cell_id).update(reserved=F("reserved") - 1, completed=F("completed") + 1)

    flags = [{"code": Participant.Exclusion.TOO_FAST, "reason": "judged in 10 s"}]
    assert apply_event(participant=participant, event=Event.QUALITY_FLAGGED, flags=flags).released == 2
    assert apply_event(participant=participant, event=Event.QUALITY_FLAGGED, flags=flags).released == 0
    participant.refresh_from_db()
    assert participant.exclusion == Participant.Exclusion.TOO_FAST
    assert all(completed == 0 and reserved == 0 for completed, reserved, _ in fills(study))
    done.refresh_from_db()
    open_.refresh_from_db()
    assert (done.status, done.counts_toward_cell) == (Assignment.Status.COMPLETED, False)
    assert (open_.status, open_.counts_toward_cell) == (Assignment.Status.RELEASED, False)


@pytest.mark.django_db
def test_giving_back_only_reserved_places_keeps_completed_pages():
    study = live_study(vignettes=2, vignettes_per_participant=2)
    participant = arrive(study, 1)
    done, _ = allocate(participant=participant)
    Assignment.objects.filter(pk=done.pk).update(status=Assignment.Status.COMPLETED)
    Cell.objects.filter(pk=done.cell_id).update(reserved=F("reserved") - 1, completed=F("completed") + 1)
    assert give_back_places(participant=participant, completed=False) == 1
    assert sum(completed for completed, _, _ in fills(study)) == 1


@pytest.mark.django_db
def test_a_returned_participant_gives_everything_back_with_the_status_set():
    study = live_study(vignettes=2, vignettes_per_participant=2)
    participant = arrive(study, 1)
    allocate(participant=participant)
    assert apply_event(participant=participant, event=Event.RETURNED).released == 2
    participant.refresh_from_db()
    assert participant.status == Participant.Status.RETURNED


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_burst_of_simultaneous_arrivals_never_fills_a_cell_past_its_target():
    # 3 systems x 4 vignettes = 12 cells, R=3: 36 places; 80 arrivals want 2 each (160 places).
    study = live_study(vignettes=4, vignettes_per_participant=2, repetitions=3)
    participants = [arrive(study, n) for n in range(80)]
    results = {}

    def run(participant):
        results[participant.pk] = allocate(participant=participant)

    assert at_once(*[partial(run, p) for p in participants]) == [None] * len(participants)
    cells = list(Cell.objects.filter(study=study))
    assert all(cell.completed + cell.reserved <= cell.target for cell in cells)
    held = sum(len(assignments) for assignments in results.values())
    assert held == sum(cell.reserved for cell in cells) == Assignment.objects.filter(counts_toward_cell=True).count()
    assert held >= 30  # nearly every place is taken; only leftovers on too few vignettes stay open
    # Everyone turned away was turned away because the study was full, not because cells were busy.
    with_room = {cell.vignette_id for cell in cells if cell.completed + cell.reserved < cell.target}
    assert len(with_room) < 2 or all(results.values())
    for assignments in results.values():
        assert len({a.vignette_id for a in assignments}) == len(assignments)


@pytest.mark.django_db
def test_a_study_without_cells_allocates_nothing():
    study = make_study(vignettes=2, vignettes_per_participant=2)
    assert study.status == Study.Status.DRAFT
    assert allocate(participant=arrive(study, 1)) == []


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_arrivals_on_a_tight_design_fill_every_place():
    # 2 systems: one cell per vignette. 6 vignettes, k=5, R=5: 30 places, exactly 6 judges' worth, so
    # only arrivals that always leave the places spread over at least 5 vignettes can fill them all.
    study = live_study(systems=("alpha", "beta"), vignettes=6, vignettes_per_participant=5, repetitions=5)
    participants = [arrive(study, n) for n in range(14)]
    results = {}

    def run(participant):
        results[participant.pk] = allocate(participant=participant)

    assert at_once(*[partial(run, p) for p in participants]) == [None] * len(participants)
    assert [(c.completed, c.reserved) for c in Cell.objects.filter(study=study)] == [(0, 5)] * 6
    assert sorted(len(assignments) for assignments in results.values()) == [0] * 8 + [5] * 6


@pytest.mark.django_db
def test_when_a_chosen_cell_has_no_room_left_nothing_is_reserved_or_stored():
    """The places and the pages go together (one statement on PostgreSQL): short of k, both roll back."""
    from django.db import transaction

    from surveys.services.allocation_sql import reserve_and_insert

    study = live_study(vignettes=3, vignettes_per_participant=2)
    participant = arrive(study, 1)
    first, second = (Cell.objects.filter(study=study, vignette=v).first() for v in study.vignettes.all()[:2])
    Cell.objects.filter(pk=second.pk).update(completed=F("target"))  # no room
    before = fills(study)
    pages = [
        Assignment(
            participant=participant,
            cell_id=cell.pk,
            vignette_id=cell.vignette_id,
            first_answer_id=cell.answer_a_id,
            second_answer_id=cell.answer_b_id,
            position=position,
            expires_at=timezone.now(),
        )
        for position, cell in enumerate([first, second], start=1)
    ]
    with transaction.atomic():
        assert reserve_and_insert(study.pk, [first.pk, second.pk], pages) is None
        transaction.set_rollback(True)
    assert fills(study) == before
    assert not Assignment.objects.exists()
    with transaction.atomic():
        stored = reserve_and_insert(study.pk, [first.pk], pages[:1])
    assert stored is not None
    assert [page.pk for page in stored] == list(Assignment.objects.values_list("pk", flat=True))
    assert Cell.objects.get(pk=first.pk).reserved == 1


@pytest.mark.django_db
def test_the_guarantees_hold_within_each_vignette_set():
    # Two sets (published, novel) of unequal size: every cell of each set filled to exactly its target,
    # never past it, and each judge on k distinct vignettes (sets are labels of vignettes: the rule ignores them).
    study = make_study(vignettes=5, vignettes_per_participant=3, repetitions=2)
    for vignette in study.vignettes.order_by("position")[:2]:
        vignette.set = "published"
        vignette.save()
    study.vignettes.filter(set="").update(set="novel")
    study = go_live(study=study)
    judges = 5 * 3 * 2 // 3  # places / k
    pages = [allocate(participant=arrive(study, n)) for n in range(judges)]
    assert all(len({a.vignette_id for a in mine}) == 3 for mine in pages)
    assert allocate(participant=arrive(study, judges)) == []
    for vignette_set in ("published", "novel"):
        cells = Cell.objects.filter(study=study, vignette__set=vignette_set)
        assert {(c.completed + c.reserved, c.target) for c in cells} == {(2, 2)}
