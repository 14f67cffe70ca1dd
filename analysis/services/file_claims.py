"""`manage.py fit_bt --by set` and `--fragility`: a comparison file's results by vignette set, and how many of
its rows each significant system hinges on."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from .. import bradley_terry as bt
from ..bradley_terry.fragility import Fragility, drop_effects, fragility
from ..bradley_terry.sets import BySetResult, by_set
from ..comparison_files import Comparisons
from .clustered_fit import clustered

ALPHA = 0.05


def differences_by_set(
    data: Comparisons, clusters: tuple[str, ...], *, reference: int, first: np.ndarray | None
) -> BySetResult:
    """Each set's abilities and each system's difference between sets with the headline test, over the file's judge
    and vignette columns (the first and second `--cluster`)."""
    assert data.sets is not None
    judges, vignettes = data.clusters[clusters[0]], data.clusters[clusters[1]]
    order = list(dict.fromkeys(data.sets.tolist()))  # the sets in the order the file first names them
    return by_set(
        data.winners, data.losers, len(data.item_names), reference=reference, sets=data.sets, judges=judges,
        vignettes=vignettes, counts=data.counts, first=first, item_names=data.item_names, set_order=order,
    )  # fmt: skip


def fragility_of_items(
    result: bt.BTResult, data: Comparisons, clusters: tuple[str, ...], *, first: np.ndarray | None
) -> dict[str, Fragility | None]:
    """Per significant system (p < 0.05 by the printed test), the fewest rows whose removal, confirmed by refitting
    with that test, makes it not significant or flips its sign; None for the reference and the rest."""
    reference = data.item_names.index(result.reference)
    shown = _tested(result, data, clusters, first)
    scores = bt.score_contributions(result, data.winners, data.losers, counts=data.counts, first=first)
    assert result.covariance is not None  # every fit sets it
    judgments = np.ones(len(data.winners)) if data.counts is None else data.counts
    found: dict[str, Fragility | None] = {}
    for k, name in enumerate(data.item_names):
        estimate, se, p = float(shown.estimates[k]), float(shown.se[k]), float(shown.p[k])
        if k == reference or not (p < ALPHA and math.isfinite(se) and se > 0):
            found[name] = None
            continue
        df = shown_df(data, clusters)
        critical = float(stats.norm.ppf(1 - ALPHA / 2) if df is None else stats.t.ppf(1 - ALPHA / 2, df))

        def holds(keep: np.ndarray, k: int = k, sign: float = math.copysign(1.0, estimate)) -> bool:
            try:
                again = _tested_on(data, keep, clusters, first, result.reference)
            except ValueError:  # nothing left to fit the system on: the claim cannot be made
                return False
            value, p_again = float(again.estimates[k]), float(again.p[k])
            return p_again < ALPHA and math.copysign(1.0, value) == sign and math.isfinite(value)

        found[name] = fragility(
            unit="judgment", effects=drop_effects(scores, result.covariance, k), units=None, judgments=judgments,
            estimate=estimate, se=se, critical=critical, holds=holds,
        )  # fmt: skip
    return found


def shown_df(data: Comparisons, clusters: tuple[str, ...]) -> int | None:
    if not clusters:
        return None
    return min(len(np.unique(data.clusters[column])) for column in clusters) - 1


def _tested(result: bt.BTResult, data: Comparisons, clusters, first) -> bt.BTResult:
    robust = clustered(result, data, clusters, first=first)
    return robust.fit if robust is not None else result


def _tested_on(data: Comparisons, keep: np.ndarray, clusters, first, reference: str) -> bt.BTResult:
    """The printed test refitted on the rows `keep` holds (items keep their numbering)."""
    kept = Comparisons(
        data.item_names, data.winners[keep], data.losers[keep], None if data.counts is None else data.counts[keep],
        None if data.first is None else data.first[keep], {c: v[keep] for c, v in data.clusters.items()},
    )  # fmt: skip
    kept_first = None if first is None else first[keep]
    refit = bt.fit(
        kept.winners, kept.losers, len(kept.item_names), reference=kept.item_names.index(reference),
        counts=kept.counts, first=kept_first, item_names=kept.item_names,
    )  # fmt: skip
    return _tested(refit, kept, clusters, kept_first)
