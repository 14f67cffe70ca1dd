"""The judging pages' two composed reads give exactly what the ORM would, and only for the study named."""

import pytest
from django.db import OperationalError, connection, transaction
from django.test.utils import CaptureQueriesContext

from surveys.models import Assignment, Participant, Study
from surveys.services.allocation import has_room
from surveys.services.judge_reads import (
    entry_read,
    locked_again,
    locked_participant,
    pages_with_participant,
    participant_with_study,
)
from surveys.services.judging import page_content
from tests.conftest import at_once, make_study
from tests.surveys.test_judging_flow import PID, csrf_client, link, live_study, through_demographics


def values(instance) -> dict:
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


@pytest.mark.django_db
def test_the_pages_read_hold_the_same_values_as_the_orm_with_one_participant_and_study_shared():
    study = live_study()
    through_demographics(csrf_client(), study)
    participant = Participant.objects.select_related("study").get()
    Assignment.objects.filter(participant=participant, position=1).update(shown_at=participant.started_at)

    pages = pages_with_participant(participant.pk, study.slug)

    expected = list(participant.assignments.select_related("vignette").order_by("position"))
    assert [values(page) for page in pages] == [values(page) for page in expected]
    assert pages[0].shown_at is not None
    assert pages[0].shown_at.tzinfo is not None
    assert all(page.participant is pages[0].participant for page in pages)
    assert values(pages[0].participant) == values(participant)
    assert isinstance(pages[0].participant.demographics, dict)  # JSON read as the ORM reads it
    assert values(pages[0].participant.study) == values(participant.study)
    assert pages[0].participant.study.translations == participant.study.translations


@pytest.mark.django_db
def test_a_pages_vignette_comes_from_the_live_studys_copy_without_a_query(django_assert_num_queries):
    study = live_study()
    through_demographics(csrf_client(), study)
    participant = Participant.objects.get()
    pages = pages_with_participant(participant.pk, study.slug)
    for page in pages:  # the pages' first showing in this process reads the live study's vignettes and answers
        page_content(page)

    with django_assert_num_queries(0):
        shown = [page_content(page)["vignette"] for page in pages]

    assert [values(vignette) for vignette in shown] == [
        values(page.vignette) for page in participant.assignments.order_by("position")
    ]


@pytest.mark.django_db
def test_the_reads_find_nothing_under_another_studys_slug():
    first, second = live_study(slug="first"), live_study(slug="second")
    through_demographics(csrf_client(), first)
    participant = Participant.objects.get()

    assert pages_with_participant(participant.pk, second.slug) == []
    assert participant_with_study(participant.pk, second.slug) is None
    found = participant_with_study(participant.pk, first.slug)
    assert found is not None
    assert values(found) == values(participant)
    assert found.study.slug == "first"


@pytest.mark.django_db
def test_the_locked_read_gives_the_participant_with_study_and_refuses_an_unknown_one():
    study = live_study()
    through_demographics(csrf_client(), study)
    participant = Participant.objects.select_related("study").get()
    with transaction.atomic():
        found = locked_participant(participant.pk)
    assert values(found) == values(participant)
    assert values(found.study) == values(participant.study)
    with pytest.raises(Participant.DoesNotExist), transaction.atomic():
        locked_participant(participant.pk + 1000)


@pytest.mark.django_db
def test_locked_again_reads_the_participant_afresh_and_keeps_the_study_already_read():
    study = live_study()
    through_demographics(csrf_client(), study)
    participant = Participant.objects.select_related("study").get()
    Participant.objects.filter(pk=participant.pk).update(status=Participant.Status.COMPLETED)
    with CaptureQueriesContext(connection) as captured, transaction.atomic():
        found = locked_again(participant)
        assert found.study is participant.study  # no second read of the study
    assert found.status == Participant.Status.COMPLETED  # the row as it is now
    assert len([q for q in captured.captured_queries if "SELECT" in q["sql"].upper()]) == 1
    with transaction.atomic():
        alone = locked_again(Participant.objects.get())  # no study read yet: read with it
    assert values(alone.study) == values(participant.study)
    other = make_study(slug="other")
    with pytest.raises(ValueError, match="not of study"), transaction.atomic():
        locked_participant(participant.pk, other)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks: PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_the_locked_read_holds_the_participants_row_and_leaves_the_study_free():
    study = live_study()
    through_demographics(csrf_client(), study)
    participant = Participant.objects.get()
    tables = Participant._meta.db_table, study._meta.db_table
    outcomes = {}

    def other_connection_tries():
        with transaction.atomic(), connection.cursor() as cursor:
            for table, pk in zip(tables, (participant.pk, study.pk), strict=True):
                try:
                    with transaction.atomic():
                        cursor.execute(f"SELECT id FROM {table} WHERE id = %s FOR UPDATE NOWAIT", [pk])
                    outcomes[table] = "free"
                except OperationalError:
                    outcomes[table] = "locked"

    with transaction.atomic():
        locked_participant(participant.pk)
        assert at_once(other_connection_tries) == [None]
    assert outcomes == {tables[0]: "locked", tables[1]: "free"}


@pytest.mark.django_db
def test_showing_the_current_page_marks_it_shown_once_in_the_read_and_no_other_page(django_assert_num_queries):
    study = live_study()
    through_demographics(csrf_client(), study)
    participant = Participant.objects.get()

    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 2):
        pages = pages_with_participant(participant.pk, study.slug, showing=1)
    first_shown = pages[0].shown_at
    assert first_shown is not None  # the page as read carries the time just written
    assert Assignment.objects.get(participant=participant, position=1).shown_at == first_shown
    assert [page.shown_at for page in pages[1:]] == [None] * (len(pages) - 1)

    again = pages_with_participant(participant.pk, study.slug, showing=1)  # a reload: the first showing counts
    assert again[0].shown_at == first_shown
    last = len(pages)
    assert last > 1
    later = pages_with_participant(participant.pk, study.slug, showing=last)  # a typed address: not the current page
    assert later[-1].shown_at is None
    assert Assignment.objects.filter(participant=participant, shown_at__isnull=False).count() == 1


@pytest.mark.django_db
def test_showing_marks_nothing_under_another_studys_slug_or_on_a_closed_page():
    first, second = live_study(slug="first"), live_study(slug="second")
    through_demographics(csrf_client(), first)
    participant = Participant.objects.get()
    assert pages_with_participant(participant.pk, second.slug, showing=1) == []
    Assignment.objects.filter(participant=participant, position=1).update(status=Assignment.Status.COMPLETED)

    pages = pages_with_participant(participant.pk, first.slug, showing=1)

    assert len(pages) == first.vignettes_per_participant
    assert not Assignment.objects.filter(participant=participant, shown_at__isnull=False).exists()


@pytest.mark.django_db
def test_the_entry_read_gives_the_study_the_persons_participants_and_the_room_as_the_orm_would():
    study = live_study(systems=("alpha", "beta"), vignettes=2, vignettes_per_participant=2, repetitions=1)
    other = live_study(slug="other")
    csrf_client().get(link(other, session="ab" * 12))  # the same person in another study: not theirs here
    assert entry_read("nothing-here", pid=PID, participant_id=None) is None

    empty = entry_read(study.slug, pid=PID, participant_id=None)
    assert values(empty.study) == values(Study.objects.get(pk=study.pk))
    assert (empty.participants, empty.has_room) == ((), True)

    through_demographics(csrf_client(), study)  # the study's only places are taken
    someone = Participant.objects.create(study=study, prolific_pid="someone-else", session_id="s2")
    read = entry_read(study.slug, pid=PID, participant_id=someone.pk)
    mine = Participant.objects.get(study=study, prolific_pid=PID)
    assert [values(p) for p in read.of_pid(PID)] == [values(mine)]
    assert read.of_pid("another-pid") is None  # not read: the caller reads it
    assert values(read.resuming) == values(someone)
    assert entry_read(study.slug, pid=PID, participant_id=None).resuming is None
    assert entry_read(other.slug, pid=None, participant_id=someone.pk).resuming is None  # not of that study
    assert (read.has_room, has_room(study=study)) == (False, False)
