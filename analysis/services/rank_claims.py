"""A question's rank claims as a run stores them: the headline test of its judgments, then the simultaneous band
and rank sets (analysis.bradley_terry.ranks; why and how: docs/statistics.md, "Ranks")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import bradley_terry as bt
from ..results import Ranks, SystemRank
from .judged import Judged, guarded
from .records import json_safe

RANKS_METHOD = (
    "simultaneous 95% band: max-|t| over the multivariate t of the headline covariance; rank sets: pairwise "
    "differences, stepdown (Mogstad, Romano, Shaikh & Wilhelm; csranks)"
)


def ranks_of(judged: Judged, *, test: bt.HeadlineTest | None) -> Ranks | None:
    """The rank claims of one question from its headline `test` (`headline_test_of`); None without a test."""
    if test is None:
        return None
    # A stream of its own: the bootstraps use [seed] and [seed, 2].
    claims = guarded(bt.rank_claims, test, rng=np.random.default_rng([judged.parameters["seed"], 3]))
    return None if claims is None else stored_ranks(claims)


def stored_ranks(claims: bt.RankClaims) -> Ranks:
    def rank(values: np.ndarray, k: int) -> int | None:
        return int(values[k]) if values[k] > 0 else None

    items = []
    for k, name in enumerate(claims.item_names):
        items.append(
            SystemRank(
                item=name,
                rank=rank(claims.rank, k),
                rank_low=rank(claims.rank_low, k),
                rank_high=rank(claims.rank_high, k),
                band_low=json_safe(float(claims.band_low[k])),
                band_high=json_safe(float(claims.band_high[k])),
                claim=claims.claim(k),
            )
        )
    return Ranks(
        level=claims.level,
        method=RANKS_METHOD,
        band_critical=json_safe(claims.band_critical),
        band_df=json_safe(claims.band_df),
        ranks_df=json_safe(claims.ranks_df),
        best=claims.best(),
        items=items,
        why_not=claims.why_not,
    )


@dataclass(frozen=True)
class RankRow:
    label: str
    rank: int | None
    claim: str
    band_low: float | None
    band_high: float | None


@dataclass(frozen=True)
class RankSection:
    """A question's rank claims as the dashboard shows them: rows by estimated rank, what may be said in words."""

    rows: list[RankRow]
    summary: str  # who is best with 95% confidence, or who may be; "" when there is no claim
    reading: str  # what the band and the rank sets are, with their numbers
    why_not: str  # why there is no band and no rank claim ("" when there are)


def rank_section(ranks: Ranks, *, labels: dict[str, str]) -> RankSection:
    percent = f"{ranks.level:.0%}"
    rows = sorted(
        (RankRow(labels.get(i.item, i.item), i.rank, i.claim, i.band_low, i.band_high) for i in ranks.items),
        key=lambda row: row.rank if row.rank is not None else len(ranks.items) + 1,
    )
    if ranks.why_not:
        return RankSection(rows=[], summary="", reading="", why_not=ranks.why_not)
    if ranks.best:
        summary = (
            f"{labels.get(ranks.best, ranks.best)} is best with {percent} confidence (its rank set is rank 1 alone)."
        )
    else:
        first = [labels.get(i.item, i.item) for i in ranks.items if i.rank_low == 1 or i.rank_low is None]
        summary = (
            f"No system is best with {percent} confidence: {_listed(first)} may each rank first. Say which are "
            "ahead of which only where their rank sets do not overlap."
        )
    reading = (
        f"Rank sets hold every system's true rank (1 = best) at once with {percent} confidence; they come from "
        "testing every pair of systems with one critical value for all pairs (Mogstad, Romano, Shaikh & Wilhelm's "
        f"“Inference for Ranks”, t with {_number(ranks.ranks_df, 1)} df). The simultaneous band is estimate ± "
        f"{_number(ranks.band_critical, 2)} × SE (t with {_number(ranks.band_df, 1)} df) instead of the single "
        f"interval's critical value: it covers every system's ability against the reference together in {percent} "
        "of studies, where the single intervals all cover together far less often."
    )
    return RankSection(rows=rows, summary=summary, reading=reading, why_not="")


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _number(value: float | None, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"
