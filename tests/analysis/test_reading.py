"""Reading judgments as columns (arrays per block of ids on PostgreSQL, chunked values_list elsewhere)
gives what the row-by-row reading gave: the same arrays per question, counts, data hash and fitted numbers."""

import hashlib

import numpy as np
import pytest

from analysis.services import fitting, reading
from analysis.services.hash_text import decimal_lines
from analysis.services.reading import QuestionData, read_study_data
from surveys.models import Answer, Assignment, Judgment, Study
from surveys.models.freeze import freeze_lifted
from tests.conftest import fabricate_judgments, make_judged_study

ABILITIES = {"alpha": 0.0, "beta": 0.7, "gamma": -0.5, "delta": 0.3}
FAST = fitting.DEFAULT_PARAMETERS | {"bootstrap": 40, "split_halves": 10}


@pytest.fixture
def judged(db):
    study = make_judged_study(abilities=ABILITIES, participants=70, seed=11, vignettes_per_participant=3)
    # Answers of different lengths (the style covariate), and judges whose judgments must not be read.
    with freeze_lifted():  # the study is live: an operator's data fix
        Answer.objects.filter(system__key="beta", vignette__key="v1").update(action="a much longer action " * 5)
    fabricate_judgments(study, ABILITIES, participants=6, seed=12, pid_prefix="X", exclusion="too-fast")
    fabricate_judgments(study, ABILITIES, participants=4, seed=13, pid_prefix="R", is_preview=True)
    return Study.objects.get(pk=study.pk)


def read_row_by_row(study):
    """The reading before issue 13: one Python tuple per judgment, appended to lists."""
    systems = list(study.systems.order_by("position", "id"))
    index = {system.pk: k for k, system in enumerate(systems)}
    questions = {
        q.pk: {"key": q.key, "columns": [[] for _ in range(6)]} for q in study.questions.order_by("position", "id")
    }
    words = reading.answer_word_counts(study=study)
    rows = (
        Judgment.objects.valid()
        .for_study(study)
        .order_by("id")
        .values_list(
            "id",
            "question_id",
            "winner_id",
            "loser_id",
            "winner__system_id",
            "loser__system_id",
            "winner_position",
            "assignment__participant_id",
            "assignment__vignette_id",
        )
    )
    digest, participants, count = hashlib.sha256(), set(), 0
    for pk, question_id, winner, loser, winner_system, loser_system, position, participant, vignette in rows:
        digest.update(f"{pk}:{winner}\n".encode())
        w, lo = index[winner_system], index[loser_system]
        values = (w, lo, w if position == Judgment.Position.FIRST else lo, participant, vignette)
        values += (words.get(winner, 0) - words.get(loser, 0),)
        for column, value in zip(questions[question_id]["columns"], values, strict=True):
            column.append(value)
        participants.add(participant)
        count += 1
    return questions, digest.hexdigest(), count, len(participants)


def as_question_data(key, columns):
    arrays = [np.asarray(c, np.int64) for c in columns[:5]] + [np.asarray(columns[5], float)]
    return QuestionData(key, key, *arrays)


@pytest.mark.parametrize("chunk_rows", [None, 7])
def test_the_columns_are_the_rows_read_one_by_one(judged, monkeypatch, chunk_rows):
    if chunk_rows:
        # Many chunks (PostgreSQL: blocks of ids), most boundaries in the middle of an assignment.
        monkeypatch.setattr(reading, "CHUNK_ROWS", chunk_rows)
        monkeypatch.setattr(reading, "BLOCK_IDS", chunk_rows)
    before, digest, count, participants = read_row_by_row(judged)
    data = read_study_data(study=judged)
    assert (data.judgment_count, data.participant_count) == (count, participants) == (70 * 3 * 5, 70)
    assert data.data_hash == digest
    assert [q.key for q in data.questions] == [q["key"] for q in before.values()]
    for question, old in zip(data.questions, before.values(), strict=True):
        for new_column, old_column in zip(
            question.arrays(), as_question_data(old["key"], old["columns"]).arrays(), strict=True
        ):
            np.testing.assert_array_equal(new_column, old_column)
    assert any(q.style.any() for q in data.questions)


def test_a_refit_on_the_columns_gives_the_numbers_of_the_row_by_row_reading(judged):
    before, *_ = read_row_by_row(judged)
    data = read_study_data(study=judged)
    common = dict(systems=data.systems, reference=data.reference, parameters=FAST, vignette_keys=data.vignette_keys)
    for position, (question, old) in enumerate(zip(data.questions, before.values(), strict=True)):
        new = fitting.fit_question(question, position=position, **common)
        was = fitting.fit_question(as_question_data(question.key, old["columns"]), position=position, **common)
        assert new.fit == was.fit
        assert new.intervals == was.intervals  # the same arrays draw the same bootstrap replicates
        assert new.split_half_reliability == was.split_half_reliability
        assert new.by_vignette == was.by_vignette
        assert new.alternative_fits == was.alternative_fits
        assert new.order_effect == was.order_effect


def test_a_study_without_valid_judgments_reads_as_empty_questions(db):
    study = make_judged_study(abilities=ABILITIES, participants=0)
    data = read_study_data(study=study)
    assert data.judgment_count == data.participant_count == 0
    assert data.data_hash == hashlib.sha256().hexdigest()
    assert all(len(q.winners) == 0 for q in data.questions)


def test_the_hash_text_is_written_as_python_writes_the_numbers():
    ids = np.array([0, 9, 10, 99, 100, 7, 123456789012, 2**62, 2**63 - 1, 10**18], np.int64)
    winners = np.array([5, 10, 0, 1000, 99999, 3, 1, 42, 10**12, 2**63 - 1], np.int64)
    for rows in (slice(None), slice(2, 3), slice(5, 7), slice(-2, None)):  # mixed widths, then alike ones
        expected = "".join(f"{i}:{w}\n" for i, w in zip(ids[rows], winners[rows], strict=True)).encode()
        assert decimal_lines(ids[rows], winners[rows]) == expected
    assert decimal_lines(ids[:0], winners[:0]) == b""


def test_participant_codes_are_numpys_unique_whether_the_ids_are_dense_or_sparse():
    rng = np.random.default_rng(5)
    for ids in (rng.integers(1, 500, 3000), rng.integers(1, 10**12, 3000), np.zeros(0, np.int64)):
        distinct, codes = reading.distinct_codes(ids)
        expected, inverse = np.unique(ids, return_inverse=True)
        np.testing.assert_array_equal(distinct, expected)
        np.testing.assert_array_equal(codes, inverse.ravel())


def test_the_blocks_read_are_the_valid_rows_the_orm_gives_in_id_order(judged, monkeypatch):
    # Pages that do not count (one released, one still reserved), a judge who failed the attention check,
    # another study's judgments between this one's, and an early page whose judgments were written last.
    first_pages = Assignment.objects.filter(participant__study=judged, participant__exclusion="").order_by("id")
    Assignment.objects.filter(pk=first_pages[0].pk).update(status=Assignment.Status.RELEASED)
    Assignment.objects.filter(pk=first_pages[1].pk).update(status=Assignment.Status.RESERVED)
    fabricate_judgments(judged, ABILITIES, participants=3, seed=14, pid_prefix="F", status="failed-attention")
    make_judged_study(slug="other", abilities=ABILITIES, participants=5, seed=15)
    rewritten = list(Judgment.objects.filter(assignment=first_pages[2]))
    Judgment.objects.filter(assignment=first_pages[2]).delete()
    for judgment in rewritten:
        judgment.pk = None
    Judgment.objects.bulk_create(rewritten)
    fabricate_judgments(judged, ABILITIES, participants=2, seed=16, pid_prefix="L")

    expected = np.array(list(reading.valid_judgment_columns(study=judged)), np.int64)
    for block_ids in (1 << 16, 7):  # one block, then many, with boundaries inside pages
        monkeypatch.setattr(reading, "BLOCK_IDS", block_ids)
        chunks = list(reading.judgment_chunks(study=judged, chunk_rows=block_ids))
        read = np.concatenate(chunks)
        np.testing.assert_array_equal(read, expected)
    assert len(expected) == (70 * 3 - 2 + 2 * 3) * 5
    assert (np.diff(expected[:, 0]) > 0).all()
    # The rewritten page's five judgments come just before the last two judges' thirty, in id order.
    assert (expected[-35:-30, 5] == first_pages[2].participant_id).all()


@pytest.mark.parametrize("ids", [[5, 3, 9, 4, 100], [7, 10**12, 3, 2**40]])
def test_counted_pages_find_each_page_whether_the_ids_are_dense_or_sparse(ids):
    ids = np.array(ids, np.int64)
    pages = reading.CountedPages.of(ids, ids * 10, ids % 7)
    asked = np.concatenate([ids, [0, 1, 6, 8, 101, 2**41]])
    rows = pages.rows(asked)
    found = {int(page): row for page, row in zip(asked, rows, strict=True) if row >= 0}
    assert set(found) == set(ids.tolist())
    assert all(pages.participants[row] == page * 10 for page, row in found.items())
