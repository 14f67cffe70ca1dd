"""A judging page's reads (ORM querysets): only the study named, the participant's row locked alone, a page
marked shown once, the entry's read of the person's participants, and the content from the snapshot."""

import pytest
from django.db import OperationalError, connection, transaction
from django.test.utils import CaptureQueriesContext

from surveys.models import Assignment, Participant
from surveys.services.judging import entry_read, page_content
from surveys.services.participation import locked_again, locked_participant
from tests.conftest import at_once, make_study
from tests.surveys.test_judging_flow import PID, csrf_client, link, live_study, through_demographics


@pytest.mark.django_db
def test_a_judging_pages_read_gives_the_pages_in_order_with_the_participant_and_study_in_one_statement(
    django_assert_num_queries,
):
    study = live_study()
    through_demographics(csrf_client(), study)
    participant = Participant.objects.get()

    with django_assert_num_queries(1):
        pages = sorted(Assignment.objects.pages_of(participant.pk, study.slug), key=lambda page: page.position)
        assert [page.participant.study.slug for page in pages] == [study.slug] * len(pages)

    assert [page.position for page in pages] == list(range(1, study.vignettes_per_participant + 1))
    assert pages[0].participant.demographics == participant.demographics


@pytest.mark.django_db
def test_a_pages_vignette_and_answers_come_from_the_live_snapshot_without_a_query(django_assert_num_queries):
    study = live_study()
    through_demographics(csrf_client(), study)
    participant = Participant.objects.get()
    pages = list(Assignment.objects.pages_of(participant.pk, study.slug))
    for page in pages:  # the snapshot into the cache
        page_content(page)

    with django_assert_num_queries(0):
        shown = [page_content(page) for page in pages]

    assert [content["vignette"].text for content in shown] == [
        page.vignette.text for page in participant.assignments.order_by("position")
    ]
    assert all(answer.shown_features for content in shown for _, answer in content["answers"])


@pytest.mark.django_db
def test_the_reads_find_nothing_under_another_studys_slug():
    first, second = live_study(slug="first"), live_study(slug="second")
    through_demographics(csrf_client(), first)
    participant = Participant.objects.get()

    assert list(Assignment.objects.pages_of(participant.pk, second.slug)) == []
    assert Participant.objects.of_study(second.slug).filter(pk=participant.pk).first() is None
    assert Participant.objects.of_study(first.slug).get(pk=participant.pk).study.slug == "first"


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
    assert alone.study.pk == study.pk
    with pytest.raises(Participant.DoesNotExist), transaction.atomic():
        locked_participant(participant.pk, make_study(slug="other"))  # not of that study
    with pytest.raises(Participant.DoesNotExist), transaction.atomic():
        locked_participant(participant.pk + 1000)


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
def test_showing_the_current_page_marks_it_shown_once_and_no_other_page():
    study = live_study()
    judge = csrf_client()
    through_demographics(judge, study)
    participant = Participant.objects.get()

    assert judge.get(f"/s/{study.slug}/pair/1/").status_code == 200
    first_shown = Assignment.objects.get(participant=participant, position=1).shown_at
    assert first_shown is not None
    judge.get(f"/s/{study.slug}/pair/1/")  # a reload: the first showing counts
    assert Assignment.objects.get(participant=participant, position=1).shown_at == first_shown
    last = study.vignettes_per_participant
    assert judge.get(f"/s/{study.slug}/pair/{last}/").status_code == 302  # a typed address: sent back
    assert list(Assignment.objects.filter(participant=participant, shown_at__isnull=False)) == [
        Assignment.objects.get(participant=participant, position=1)
    ]


@pytest.mark.django_db
def test_the_entry_read_gives_the_study_and_the_persons_participants_of_it_only():
    study = live_study(systems=("alpha", "beta"), vignettes=2, vignettes_per_participant=2, repetitions=1)
    other = live_study(slug="other")
    csrf_client().get(link(other, session="ab" * 12))  # the same person in another study: not theirs here
    assert entry_read("nothing-here", pid=PID, participant_id=None) is None

    empty = entry_read(study.slug, pid=PID, participant_id=None)
    assert (empty.study.pk, empty.participants, empty.resuming) == (study.pk, (), None)

    through_demographics(csrf_client(), study)
    someone = Participant.objects.create(study=study, prolific_pid="someone-else", session_id="s2")
    read = entry_read(study.slug, pid=PID, participant_id=someone.pk)
    mine = Participant.objects.get(study=study, prolific_pid=PID)
    assert read.of_pid(PID) == [mine]
    assert read.of_pid("another-pid") is None  # not read: the caller reads it
    assert read.resuming == someone
    assert entry_read(study.slug, pid=PID, participant_id=None).resuming is None
    assert entry_read(other.slug, pid=None, participant_id=someone.pk).resuming is None  # not of that study
