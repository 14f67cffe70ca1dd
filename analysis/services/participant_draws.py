"""The participant bootstrap's draws, shared by every question of a refit (a joint bootstrap), and the split
halves that every question draws alike."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import bradley_terry as bt
from ..bradley_terry.labels import count_distinct, distinct, positions
from .judged import guarded
from .reading import QuestionData


@dataclass(frozen=True)
class ParticipantReplicates:
    """A question's participant-bootstrap replicates from `resample_participants` (None: participants cannot be
    resampled)."""

    estimates: np.ndarray | None


def resample_participants(
    questions: list[QuestionData], *, n_items: int, reference: int, parameters: dict
) -> list[ParticipantReplicates]:
    """Every question's participant bootstrap replicates, drawn with one set of participant weights.

    Participants answer every question, so replicate r takes the same participants, as often, for every question
    (a joint bootstrap: each question's intervals are those of a participant bootstrap, and the
    questions' intervals are coherent). The weights are drawn once per refit on a stream of their own
    (seed, 1), over the study's participants numbered in the order of their ids; the participant bootstrap's
    percentiles and the two-way bootstrap's judge (participant) part both use these replicates."""
    drawn = [ParticipantReplicates(None) for _ in questions]
    n_boot = parameters["bootstrap"]
    if n_boot < 1 or not questions:
        return drawn
    participant_ids = distinct(np.concatenate([distinct(q.clusters) for q in questions]))
    positions, bases = [], []

    def tables():  # one question's table at a time: only its rows are kept once resampling starts
        for position, question in enumerate(questions):
            if count_distinct(question.clusters) < 2:
                continue
            prepared = guarded(
                _participant_table,
                question,
                participant_ids=participant_ids,
                n_items=n_items,
                reference=reference,
                order_effect=parameters["order_effect"],
            )
            if prepared is None:
                continue
            positions.append(position)
            bases.append(prepared[0])
            table, prepared = prepared[1], None
            yield table
            table = None  # freed before the next question's table is built

    estimates = guarded(
        bt.shared_resample, tables(), bases, rng=np.random.default_rng([parameters["seed"], 1]), n_boot=n_boot
    )
    if estimates is None:
        return drawn
    for position, replicates in zip(positions, estimates, strict=True):
        drawn[position] = ParticipantReplicates(replicates)
    return drawn


def _participant_table(
    question: QuestionData, *, participant_ids: np.ndarray, n_items: int, reference: int, order_effect: bool
) -> tuple[bt.RefitBasis, bt.DenseTable]:
    """A question's full fit and its per-participant counts over the study's participants (`participant_ids`)."""
    winners, losers, first = (
        np.asarray(column, np.int64) for column in (question.winners, question.losers, question.first)
    )
    return bt.prepare_dense_table(
        winners,
        losers,
        n_items,
        reference=reference,
        clusters=positions(participant_ids, np.asarray(question.clusters)),  # all among them: no -1
        n_clusters=len(participant_ids),
        first=first if order_effect else None,
    )


class SplitDraws:
    """Split-half assignments shared by a refit's questions. Each question draws its halves from a generator
    seeded alike, so questions over as many participants draw the same halves: they are drawn once (400,000
    judges: about a second each time) and the generator is left where drawing them leaves it."""

    def __init__(self) -> None:
        self._drawn: dict[tuple, tuple[np.ndarray, Mapping[str, Any]]] = {}

    def halves(self, rng: np.random.Generator, *, n_clusters: int, n_splits: int) -> np.ndarray:
        """`bt.split_halves(rng, n_clusters, n_splits)`, drawn the first time this generator state asks."""
        key = (repr(rng.bit_generator.state), n_clusters, n_splits)
        if key not in self._drawn:
            halves = bt.split_halves(rng, n_clusters, n_splits)
            self._drawn[key] = (halves, rng.bit_generator.state)
        halves, after = self._drawn[key]
        rng.bit_generator.state = after
        return halves
