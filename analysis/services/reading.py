"""Reading a study's valid judgments into arrays per question (item = the study's systems in order).

Judgments are read as columns, a chunk at a time, into numpy arrays of small integer codes: on
PostgreSQL as the bytes of fixed-width rows the database builds per block of ids (`string_agg` of each
row's `int8send`s over a primary-key range, parsed by numpy: no Python object per row, no join, no
sort), elsewhere by `values_list` over the ORM's chunked iterator. Ten million judgments
take about 180 MB this way (18 bytes each) instead of the gigabytes of Python lists.
"""

from __future__ import annotations

import hashlib
from collections.abc import Generator, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
from django.core.exceptions import ValidationError
from django.db import connections, router, transaction
from django.db.models import BigIntegerField, Case, Max, Min, Value, When
from django.db.models.functions import Cast

from moraljudge.replica import reads_from_replica
from surveys.models import Answer, Assignment, Judgment, Study

from ..bradley_terry.labels import codes, distinct, positions
from .block_reads import block_readers, read_blocks, read_each
from .hash_text import decimal_lines

# Rows per chunk: a chunk's arrays (and, on SQLite, its tuples) stay a few MB.
CHUNK_ROWS = 100_000
# Columns read per judgment, in this order; every one a bigint, so PostgreSQL's rows have a fixed width.
# The set of a vignette left without one in a study whose other vignettes have sets.
NO_SET = "(no set)"
COLUMNS = ("id", "question_id", "winner_id", "loser_id", "shown_first", "participant", "vignette")


@dataclass
class QuestionData:
    """One question's valid judgments as arrays over the study's systems (item order), in judgment-id order."""

    key: str
    text: str
    winners: np.ndarray  # item index of the winner
    losers: np.ndarray
    first: np.ndarray  # item shown first
    clusters: np.ndarray  # participant id
    vignettes: np.ndarray  # vignette id
    style: np.ndarray  # words(winner) - words(loser)

    def arrays(self):
        return (
            np.asarray(self.winners, np.int64),
            np.asarray(self.losers, np.int64),
            np.asarray(self.first, np.int64),
            np.asarray(self.clusters, np.int64),
            np.asarray(self.vignettes, np.int64),
            np.asarray(self.style, float),
        )


@dataclass
class StudyData:
    systems: list[dict]  # key, label, kind; index = item number
    reference: int
    questions: list[QuestionData]
    vignette_keys: dict[int, str]
    judgment_count: int
    participant_count: int
    data_hash: str
    # Each vignette's set by id, in the study's vignette order; empty when the study's vignettes are one set.
    vignette_sets: dict[int, str] = field(default_factory=dict)


def answer_word_counts(*, study: Study) -> dict[int, int]:
    """Words per answer of the study (action, additional information, features and reasons)."""
    answers = Answer.objects.for_study(study).prefetch_related("features")
    return {answer.pk: answer.word_count() for answer in answers}


@reads_from_replica
def read_study_data(*, study: Study) -> StudyData:
    """The valid judgments of a study, per question, as item indices over its systems."""
    systems = list(study.systems.order_by("position", "id"))
    if study.reference_system_id is None:
        raise ValidationError(f"Study '{study.slug}' has no reference system: set one before fitting.")
    index = {system.pk: k for k, system in enumerate(systems)}
    if study.reference_system_id not in index:
        raise ValidationError(f"Study '{study.slug}': the reference system is not one of its systems.")
    questions = list(study.questions.order_by("position", "id").values_list("pk", "key", "text"))
    answers = AnswerTable.of(study=study, item_of_system=index)
    question_ids = np.array([pk for pk, _, _ in questions], np.int64)
    question_order = np.argsort(question_ids)

    digest = hashlib.sha256()
    pieces: dict[str, list[np.ndarray]] = {
        name: [] for name in ("question", "winner", "loser", "first", "who", "vignette", "style")
    }
    # Closed at once if a row is refused: the reading's transaction and connections end before the error goes up.
    with closing(judgment_chunks(study=study)) as chunks:
        for chunk in chunks:
            ids, question, winner, loser, shown_first, participant, vignette = chunk.T
            digest.update(decimal_lines(ids, winner))
            at = question_order[np.searchsorted(question_ids, question, sorter=question_order)]
            winner_row, loser_row = answers.rows(winner), answers.rows(loser)
            winner_item, loser_item = answers.item(winner_row), answers.item(loser_row)
            pieces["question"].append(at.astype(np.int16))
            pieces["winner"].append(winner_item)
            pieces["loser"].append(loser_item)
            pieces["first"].append(shown_first.astype(bool))
            pieces["who"].append(participant.copy())
            pieces["vignette"].append(vignette.astype(np.int32))
            pieces["style"].append(answers.words(winner_row) - answers.words(loser_row))
    columns = {name: _joined(pieces.pop(name), name) for name in list(pieces)}  # each column's pieces freed as joined
    # Participants as codes 0..J-1 in the order of their ids (the order np.unique gives the fits).
    participant_ids, participant_codes = distinct_codes(columns.pop("who"))
    first_items = np.where(columns["first"], columns["winner"], columns["loser"])
    per_question = []
    for position, (_, key, text) in enumerate(questions):
        rows = columns["question"] == position
        per_question.append(
            QuestionData(
                key,
                text,
                winners=columns["winner"][rows],
                losers=columns["loser"][rows],
                first=first_items[rows],
                clusters=participant_ids[participant_codes[rows]],
                vignettes=columns["vignette"][rows],
                style=columns["style"][rows],
            )
        )
    return StudyData(
        systems=[{"key": s.key, "label": s.label or s.key, "kind": s.kind} for s in systems],
        reference=index[study.reference_system_id],
        questions=per_question,
        vignette_keys=dict(study.vignettes.values_list("id", "key")),
        judgment_count=len(participant_codes),
        participant_count=len(participant_ids),
        data_hash=digest.hexdigest(),
        vignette_sets=vignette_sets(study=study),
    )


def vignette_sets(*, study: Study) -> dict[int, str]:
    """Each vignette's set by id, in the study's order ("(no set)" for one left out); {} when its vignettes are all
    in one set."""
    sets = {pk: name or NO_SET for pk, name in study.vignettes.order_by("position", "id").values_list("id", "set")}
    return sets if len(set(sets.values())) > 1 else {}


@dataclass(frozen=True)
class AnswerTable:
    """The study's answers by id: the item (system) each belongs to and its word count."""

    ids: np.ndarray  # sorted
    items: np.ndarray
    word_counts: np.ndarray

    @classmethod
    def of(cls, *, study: Study, item_of_system: dict[int, int]) -> AnswerTable:
        words = answer_word_counts(study=study)
        pairs = sorted(Answer.objects.for_study(study).values_list("pk", "system_id"))
        return cls(
            ids=np.array([pk for pk, _ in pairs], np.int64),
            items=np.array([item_of_system.get(system, -1) for _, system in pairs], np.int16),
            word_counts=np.array([words.get(pk, 0) for pk, _ in pairs], np.int32),
        )

    def rows(self, answer_ids: np.ndarray) -> np.ndarray:
        """The row of each answer id in this table."""
        at = positions(self.ids, answer_ids)
        if len(at) and at.min() < 0:
            raise ValidationError("A judgment names an answer that is not one of the study's answers.")
        return at

    def item(self, rows: np.ndarray) -> np.ndarray:
        items = self.items[rows]
        if (items < 0).any():
            raise ValidationError("A judgment names an answer of a system that is not one of the study's systems.")
        return items

    def words(self, rows: np.ndarray) -> np.ndarray:
        return self.word_counts[rows]


def _shown_first():
    """1 when the winner was shown first, else 0: a bigint (a literal would come back as a 4-byte integer)."""
    return Cast(Case(When(winner_position=Judgment.Position.FIRST, then=Value(1)), default=Value(0)), BigIntegerField())


def valid_judgment_columns(*, study: Study):
    """The valid judgments of a study as rows of COLUMNS, in id order."""
    # The study's question ids rather than a join on questions: PostgreSQL then knows, from its
    # statistics, that most judgments qualify, and hash-joins instead of a million index lookups.
    return (
        Judgment.objects.valid()
        .filter(question_id__in=list(study.questions.values_list("pk", flat=True)))
        .order_by("id")
        .annotate(shown_first=_shown_first())
        .values_list(
            "id",
            "question_id",
            "winner_id",
            "loser_id",
            "shown_first",
            "assignment__participant_id",
            "assignment__vignette_id",
        )
    )


def judgment_chunks(*, study: Study, chunk_rows: int | None = None) -> Generator[np.ndarray]:
    """The valid judgments as (rows x COLUMNS) int64 arrays in id order: on PostgreSQL a block of
    BLOCK_IDS ids at a time, elsewhere `chunk_rows` (CHUNK_ROWS) rows at a time."""
    chunk_rows = chunk_rows or CHUNK_ROWS
    alias = router.db_for_read(Judgment)
    if connections[alias].vendor == "postgresql":
        yield from _blocked_chunks(study=study, alias=alias)
        return
    batch: list[tuple] = []
    for row in valid_judgment_columns(study=study).iterator(chunk_size=chunk_rows):
        batch.append(row)
        if len(batch) == chunk_rows:
            yield np.array(batch, np.int64)
            batch = []
    if batch:
        yield np.array(batch, np.int64)


# Judgments per block on PostgreSQL: the ids from n * BLOCK_IDS to (n + 1) * BLOCK_IDS - 1 come back as one bytea.
BLOCK_IDS = 1 << 16


def _blocked_chunks(*, study: Study, alias: str) -> Iterator[np.ndarray]:
    """The valid judgments read as the bytes of their rows (`string_agg(int8send(c0) || ...)`, parsed by
    numpy: no Python object per row), a block of ids at a time, with no join and no sort. (Arrays of the
    columns, `array_send(array_agg(column))`, cost PostgreSQL twice as much.)

    Joining judgments to their pages and participants and grouping ten million rows by block made
    PostgreSQL sort the whole join on disk (issue 24). Instead the study's pages that count are read
    once (a fifth as many rows: id, participant, vignette), and each block is a range scan of the
    judgment table's primary key; the join is a numpy lookup. Both reads see one snapshot, and the blocks
    are read on two connections sharing it (block_reads.py)."""
    connection = connections[alias]
    snapshot = not connection.in_atomic_block  # inside a caller's transaction, its snapshot rules
    with transaction.atomic(using=alias):  # a server-side cursor lives in a transaction
        if snapshot:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        with block_readers(connection, own_transaction=snapshot) as readers:
            pages = CountedPages.read(study=study, alias=alias, readers=readers)
            yield from _judgment_blocks(study=study, alias=alias, pages=pages, readers=readers)


def _judgment_blocks(*, study: Study, alias: str, pages: CountedPages, readers: list) -> Iterator[np.ndarray]:
    """The counted judgments (`pages`) of the study, a block of ids at a time, read by `readers`."""
    judgments = _study_judgments(study=study).using(alias)
    bounds = judgments.order_by().aggregate(low=Min("id"), high=Max("id"))
    if bounds["low"] is None or not len(pages.ids):
        return
    sql, params = judgments.query.sql_with_params()
    names = [f"c{n}" for n in range(len(JUDGMENT_COLUMNS))]
    blocked = (
        f"SELECT block.n, sent.* FROM unnest(%s::bigint[]) AS block(n) CROSS JOIN LATERAL "
        f"(SELECT {_row_bytes(names)} FROM ({sql}) AS judgment({', '.join(names)}) "
        f"WHERE c0 >= block.n * {BLOCK_IDS} AND c0 < (block.n + 1) * {BLOCK_IDS}) AS sent"
    )
    blocks = range(bounds["low"] // BLOCK_IDS, bounds["high"] // BLOCK_IDS + 1)
    with closing(read_blocks(readers, blocked, blocks, params)) as sent_blocks:
        for block, (n, count, sent) in zip(blocks, sent_blocks, strict=True):
            if n != block:
                raise RuntimeError("PostgreSQL returned the blocks of judgments out of order.")
            if count:  # 0: no judgment of the study in this block
                yield pages.joined(list(_bigint_rows(sent, count, len(names)).T))


# The columns read per judgment of the study on PostgreSQL (its page, not yet known to count).
JUDGMENT_COLUMNS = ("id", "question_id", "winner_id", "loser_id", "shown_first", "assignment_id")


def _study_judgments(*, study: Study):
    """Every judgment on the study's questions as JUDGMENT_COLUMNS, counted or not: the table alone."""
    return (
        Judgment.objects.filter(question_id__in=list(study.questions.values_list("pk", flat=True)))
        .order_by()
        .annotate(shown_first=_shown_first())
        .values_list(*JUDGMENT_COLUMNS)
    )


@dataclass(frozen=True)
class CountedPages:
    """The study's pages whose judgments count (Assignment.objects.valid()): participant and vignette by page id."""

    ids: np.ndarray  # sorted
    participants: np.ndarray
    vignettes: np.ndarray
    row_of_id: np.ndarray | None  # when the ids are dense: the row of id (low + i), or -1

    @classmethod
    def read(cls, *, study: Study, alias: str, readers: list) -> CountedPages:
        """The pages, a range of page ids per reader, the readers at once."""
        pages = Assignment.objects.using(alias).valid().filter(participant__study=study).order_by()
        sql, params = pages.values_list("id", "participant_id", "vignette_id").query.sql_with_params()
        bounds = Assignment.objects.using(alias).aggregate(low=Min("id"), high=Max("id"))  # the index's two ends
        if bounds["low"] is None:
            return cls.of(*(np.zeros(0, np.int64) for _ in range(3)))
        ends = np.linspace(bounds["low"], bounds["high"] + 1, len(readers) + 1).astype(np.int64)
        query = f"SELECT {_row_bytes(['c0', 'c1', 'c2'])} FROM ({sql}) AS page(c0, c1, c2) WHERE c0 >= %s AND c0 < %s"
        parts = read_each(readers, [(query, [*params, int(low), int(high)]) for low, high in pairwise(ends)])
        rows = [_bigint_rows(sent, count, 3) for count, sent in parts if count]
        columns = np.concatenate(rows).T if rows else np.zeros((3, 0), np.int64)
        return cls.of(*(column.astype(np.int64) for column in columns))

    @classmethod
    def of(cls, ids: np.ndarray, participants: np.ndarray, vignettes: np.ndarray) -> CountedPages:
        order = np.argsort(ids, kind="stable")
        ids, participants, vignettes = ids[order], participants[order], vignettes[order]
        row_of_id = None
        if len(ids) and ids[-1] - ids[0] <= 4 * len(ids) + 1024:  # dense: a lookup table, not a binary search
            row_of_id = np.full(int(ids[-1] - ids[0]) + 1, -1, np.int32)
            row_of_id[ids - ids[0]] = np.arange(len(ids), dtype=np.int32)
        return cls(ids, participants, vignettes.astype(np.int32), row_of_id)

    def rows(self, page_ids: np.ndarray) -> np.ndarray:
        """The row of each page id, -1 for a page whose judgments do not count."""
        if not len(self.ids):
            return np.full(len(page_ids), -1, np.int64)
        if self.row_of_id is not None:
            offset = page_ids - self.ids[0]
            inside = (offset >= 0) & (offset < len(self.row_of_id))
            return np.where(inside, self.row_of_id[np.where(inside, offset, 0)], -1)
        at = np.minimum(np.searchsorted(self.ids, page_ids), len(self.ids) - 1)
        return np.where(self.ids[at] == page_ids, at, -1)

    def joined(self, columns: list[np.ndarray]) -> np.ndarray:
        """A block's JUDGMENT_COLUMNS (an array each) as rows of COLUMNS: the counted ones, in id order, each
        column contiguous (a column-major array)."""
        rows = self.rows(columns[-1])
        kept = rows >= 0
        every = bool(kept.all())
        if not every:
            rows = rows[kept]
        ids = columns[0] if every else columns[0][kept]
        order = np.argsort(ids, kind="stable") if len(ids) > 1 and (np.diff(ids) < 0).any() else None
        joined = np.empty((len(COLUMNS), len(rows)), np.int64)
        for k, column in enumerate(columns[:-1]):  # all but the page, whose participant and vignette follow
            joined[k] = column if every else column[kept]
        joined[-2], joined[-1] = self.participants[rows], self.vignettes[rows]
        return (joined if order is None else joined[:, order]).T


def _row_bytes(names: list[str]) -> str:
    """The aggregates of the rows of bigint columns `names`: how many, and their bytes, row after row."""
    row = " || ".join(f"int8send({name}::bigint)" for name in names)
    return f"count(*), string_agg({row}, ''::bytea)"


def _bigint_rows(sent: bytes, count: int, width: int) -> np.ndarray:
    """`count` rows of `width` bigints as `_row_bytes` sent them, a view of the bytes as big-endian integers."""
    if len(sent) != count * width * 8:  # a NULL would have left its row out (the columns are NOT NULL)
        raise ValueError("The rows read are not whole rows of bigints.")
    return np.frombuffer(sent, dtype=">i8").reshape(count, width)


def distinct_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(values, return_inverse=True), the codes as int32: without sorting when the values
    (participant ids) are dense, which saves the sort's copies of ten million ids."""
    return distinct(values), codes(values, np.int32)


def _joined(parts: list[np.ndarray], name: str) -> np.ndarray:
    if parts:
        return np.concatenate(parts)
    dtypes = {"question": np.int16, "winner": np.int16, "loser": np.int16, "first": bool, "who": np.int64}
    return np.zeros(0, dtypes.get(name, np.int32))
