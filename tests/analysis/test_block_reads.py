"""Reading the blocks of judgments on two PostgreSQL connections that share one snapshot gives what one
connection reads, even when a judgment changes while they read."""

import numpy as np
import psycopg
import pytest

from analysis.services import block_reads, reading
from analysis.services.reading import read_study_data
from surveys.models import Judgment
from tests.conftest import make_judged_study

pytestmark = [
    pytest.mark.django_db(transaction=True),  # the reading's own transaction, as in a refit
    pytest.mark.postgres,  # blocks are read so on PostgreSQL only
]

ABILITIES = {"alpha": 0.0, "beta": 0.7, "gamma": -0.5}


def read(study, readers: int, monkeypatch):
    monkeypatch.setattr(block_reads, "READERS", readers)
    return read_study_data(study=study)


def same_data(one, other) -> bool:
    return one.data_hash == other.data_hash and all(
        all(np.array_equal(a, b) for a, b in zip(p.arrays(), q.arrays(), strict=True))
        for p, q in zip(one.questions, other.questions, strict=True)
    )


@pytest.fixture
def study(monkeypatch):
    monkeypatch.setattr(reading, "BLOCK_IDS", 7)  # many blocks, read in turn by the two connections
    return make_judged_study(abilities=ABILITIES, participants=30, seed=3)


def test_two_connections_read_the_arrays_and_hash_that_one_reads(study, monkeypatch):
    opened = []
    second = block_reads._second_connection
    monkeypatch.setattr(block_reads, "_second_connection", lambda *a: opened.append(1) or second(*a))
    alone = read(study, 1, monkeypatch)
    assert not opened
    shared = read(study, 2, monkeypatch)
    assert opened == [1]
    assert alone.judgment_count == 30 * 3 * 5
    assert same_data(shared, alone)


def test_a_judgment_changed_while_the_blocks_are_read_is_read_as_it_was(study, monkeypatch):
    before = read(study, 1, monkeypatch)
    ids = Judgment.objects.order_by("id").values_list("id", flat=True)
    first_block = ids[0] // 7
    # A judgment in a block the second connection reads (the first block's neighbour, and every other one).
    judgment = Judgment.objects.get(pk=next(pk for pk in ids if (pk // 7 - first_block) % 2 == 1))
    second = block_reads._second_connection

    def changed_then_opened(django_connection, snapshot):
        # Another session commits a change after the reading's snapshot was taken, before the second
        # connection starts: it must still see the snapshot, not the change.
        with psycopg.connect(**django_connection.get_connection_params()) as other:
            other.execute(
                "UPDATE surveys_judgment SET winner_id = loser_id, loser_id = winner_id WHERE id = %s", [judgment.pk]
            )
        return second(django_connection, snapshot)

    monkeypatch.setattr(block_reads, "_second_connection", changed_then_opened)
    during = read(study, 2, monkeypatch)
    assert same_data(during, before)
    monkeypatch.setattr(block_reads, "_second_connection", second)
    after = read(study, 2, monkeypatch)
    assert Judgment.objects.get(pk=judgment.pk).winner_id == judgment.loser_id
    assert after.data_hash != before.data_hash  # the change is read by the next reading


def test_a_refit_that_fails_while_reading_is_stored_as_failed(study, monkeypatch):
    from analysis.models import AnalysisRun
    from analysis.services import refit_study

    other = make_judged_study(slug="other", abilities=ABILITIES, participants=2, seed=4)
    stranger = Judgment.objects.filter(assignment__participant__study=other).first()
    judgment = Judgment.objects.filter(assignment__participant__study=study).order_by("id")[50]
    Judgment.objects.filter(pk=judgment.pk).update(loser_id=stranger.winner_id)  # another study's answer
    monkeypatch.setattr(block_reads, "READERS", 2)
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND)
    assert "not one of the study's answers" in run.error
    assert AnalysisRun.objects.get(pk=run.pk).status == AnalysisRun.Status.FAILED
