"""A question's results per vignette set and each system's difference between sets, as a refit stores them.

The maths is analysis/bradley_terry/sets.py (the set interaction, the headline test of each difference, Holm
across systems); this module only reads which vignette is in which set and turns the result into the stored shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..bradley_terry.sets import BySetResult, by_set
from ..results import BySet, QuestionResult, SetDifference, SetResult
from ..results.shapes import HEADLINE_KIND
from .judged import Judged, guarded_clustered
from .records import json_safe

# results.csv's name of the test of the rows by set and of the differences: the headline test's.
INTERVAL_KEY = HEADLINE_KIND


def sets_of(vignettes: np.ndarray, vignette_sets: dict[int, str]) -> np.ndarray:
    """Each judgment's set from its vignette ("" for a vignette in no set)."""
    distinct, inverse = np.unique(np.asarray(vignettes), return_inverse=True)
    names = np.array([vignette_sets.get(int(v), "") for v in distinct], dtype=object).astype(str)
    return names[inverse.ravel()]


def set_order(vignette_sets: dict[int, str], present: set[str]) -> list[str]:
    """The sets in the study's vignette order (`vignette_sets` is read in it), the first the baseline."""
    return [name for name in dict.fromkeys(vignette_sets.values()) if name in present]


def fit_by_set(judged: Judged, *, vignette_sets: dict[int, str]) -> BySet | None:
    """Each set's abilities and each system's difference between sets, or None when the judged vignettes are all
    in one set. Estimates follow the question's main fit (with the order effect when the study's estimates have it)."""
    labels = sets_of(judged.vignettes, vignette_sets)
    order = set_order(vignette_sets, set(labels.tolist()))
    if len(order) < 2:
        return None
    result = guarded_clustered(
        by_set, judged, vignettes=judged.vignettes, sets=labels, item_names=judged.names, set_order=order
    )
    return None if result is None else stored_by_set(result)


def stored_by_set(result: BySetResult) -> BySet:
    return BySet(
        interval=result.interval,
        level=result.level,
        sets=[
            SetResult(
                set=one.name,
                n_judgments=one.n_comparisons,
                n_judges=one.n_judges,
                n_vignettes=one.n_vignettes,
                estimates=json_safe(one.estimates),
                se=json_safe(one.se),
                p=json_safe(one.p),
                ci_low=json_safe(one.ci_low),
                ci_high=json_safe(one.ci_high),
                df=json_safe(one.df),
                why_not=one.why_not,
            )
            for one in result.sets
        ],
        differences=list(result.differences),
    )


@dataclass(frozen=True)
class SetCell:
    """One system's ability in one set, as the table shows it."""

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None


@dataclass(frozen=True)
class SetRow:
    """One system's row of a question's table by set: its ability per set and its differences between sets."""

    system: str
    label: str
    reference: bool
    per_set: list[SetCell]  # in the order of BySet.sets
    differences: list[SetDifference]  # each later set minus the first


@dataclass(frozen=True)
class SetTable:
    sets: list[SetResult]
    compared: list[str]  # "novel − published" per difference column
    rows: list[SetRow]
    interval: str
    untested: list[str]  # "novel: only 2 vignettes ..." per set without a test


def set_table(by_set: BySet, *, systems: list[str], labels: dict[str, str], reference: str) -> SetTable:
    """The table the dashboard shows of a question's results by set, in the systems' order."""
    rows = []
    for k, key in enumerate(systems):
        cells = [SetCell(one.estimates[k], one.ci_low[k], one.ci_high[k], one.p[k]) for one in by_set.sets]
        differences = [d for d in by_set.differences if d.system == key]
        rows.append(SetRow(key, labels.get(key, key), key == reference, cells, differences))
    pairs = list(dict.fromkeys(tuple(d.sets) for d in by_set.differences))
    return SetTable(
        sets=by_set.sets,
        compared=[f"{later} − {first}" for first, later in pairs],
        rows=rows,
        interval=by_set.interval,
        untested=[f"{one.set}: {one.why_not}" for one in by_set.sets if one.why_not],
    )


def set_result_rows(question: QuestionResult, *, labels: dict[str, str]) -> Iterator[dict]:
    """results.csv's rows of a question's results by set: per set and system its ability with the set's headline
    test, then per difference between sets (`set` minus `compared_with`) its test and Holm p. Columns not given
    are empty."""
    by_set, fit = question.by_set, question.fit
    if by_set is None or fit is None:
        return
    systems = [item.item for item in fit.items]
    for one in by_set.sets:
        for k, key in enumerate(systems):
            yield {
                "question": question.question, "system": key, "label": labels.get(key, key),
                "estimate": one.estimates[k], "se": one.se[k] if key != fit.reference else None, "p": one.p[k],
                "ci_low": one.ci_low[k], "ci_high": one.ci_high[k], "interval": INTERVAL_KEY, "df": one.df[k],
                "tested": not one.why_not, "why_not": one.why_not, "set": one.set, "compared_with": "",
            }  # fmt: skip
    for d in by_set.differences:
        yield {
            "question": question.question, "system": d.system, "label": labels.get(d.system, d.system),
            "estimate": d.estimate, "se": d.se, "p": d.p, "p_holm": d.p_holm, "ci_low": d.ci_low,
            "ci_high": d.ci_high, "interval": INTERVAL_KEY, "df": d.df, "tested": d.p is not None,
            "why_not": "" if d.p is not None else "no test of this difference (too few vignettes or judges in a set)",
            "set": d.sets[1], "compared_with": d.sets[0],
        }  # fmt: skip
