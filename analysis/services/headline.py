"""A question's Headline from the headline test: what its table, the API, results.csv and the plots lead with.

The test is `bt.headline_test` (CR2 over vignettes with the judge design effect, Satterthwaite df per system),
the same call the power simulation makes. Where it cannot generalise (fewer than 3 vignettes, one judge) the
headline is a narrower interval, labelled for its narrower question, with no p; `why` says why in words.
A system whose variance the design cannot estimate (or whose SE says nothing) gets its reason instead of numbers.
"""

from __future__ import annotations

import math

import numpy as np

from .. import bradley_terry as bt
from ..bradley_terry.labels import count_distinct
from ..results import INTERVAL_KINDS, Headline, Interval
from ..results.headline import WALD_KIND, WALD_LABEL, degenerate
from ..results.shapes import HEADLINE_KIND, NARROWER_KIND
from .judged import Judged, guarded_clustered

NARROWER_NOTE = "Narrower: it does not generalise to other vignettes, so no p, Holm p or stars are given."
WALD_NARROWER_ANSWERS = (
    "These very answers, judged independently (each judgment independent): with one judge nothing generalises "
    "beyond this judge and these answers."
)


def headline_test_of(judged: Judged, *, plain: bt.BTResult) -> bt.HeadlineTest | None:
    """The headline test of one question's judgments around its maximum-likelihood fit `plain` (None when it
    cannot be computed): the headline and the rank claims both read it."""
    return guarded_clustered(
        bt.headline_test, judged, vignettes=judged.vignettes, item_names=judged.names, fitted=plain
    )


def headline_of(
    judged: Judged, *, plain: bt.BTResult, intervals: dict[str, Interval], test: bt.HeadlineTest | None
) -> Headline:
    """The headline of one question: its headline `test` (from `headline_test_of`), or, where the question has no
    test, the judge-robust interval from `intervals` (the Wald one with a single judge)."""
    n_vignettes, n_judges = count_distinct(judged.vignettes), count_distinct(judged.clusters)
    why_not = bt.why_no_test(n_vignettes, n_judges)
    if test is None and not why_not:
        why_not = "No test: the headline test could not be computed on these judgments."
    if why_not or test is None:
        return _narrower(judged, plain=plain, intervals=intervals, why=why_not, counts=(n_vignettes, n_judges))
    return _tested(test, reference=judged.reference)


def _tested(test: bt.HeadlineTest, *, reference: int) -> Headline:
    se, df, p, low, high, reasons = [], [], [], [], [], []
    for k in range(len(test.item_names)):
        estimate, error = _number(test.estimates[k]), _number(test.se[k])
        reason = (
            ""
            if k == reference
            else test.not_estimable[k] or (degenerate(estimate, error) if estimate is not None else "")
        )
        fine = not reason and estimate is not None and k != reference
        at_zero = 0.0 if k == reference else None  # the reference: 0 by definition, no test
        se.append(error if fine else at_zero)
        df.append(_number(test.df[k]) if fine else None)
        p.append(_number(test.p[k]) if fine else None)
        low.append(_number(test.ci_low[k]) if fine else at_zero)
        high.append(_number(test.ci_high[k]) if fine else at_zero)
        reasons.append(reason)
    described = INTERVAL_KINDS[HEADLINE_KIND]
    return Headline(
        interval=HEADLINE_KIND,
        label=described.label,
        answers=described.answers,
        df=df,
        n_vignettes=test.n_vignettes,
        n_judges=test.n_judges,
        level=test.level,
        se=se,
        p=p,
        ci_low=low,
        ci_high=high,
        not_estimable=reasons,
        why="",
        tested=True,
    )


def _narrower(
    judged: Judged, *, plain: bt.BTResult, intervals: dict[str, Interval], why: str, counts: tuple[int, int]
) -> Headline:
    """No test: the judge-robust interval (the Wald one with one judge), labelled narrower, without p."""
    robust = intervals.get(NARROWER_KIND)
    if robust is not None:
        kind, label, answers = NARROWER_KIND, INTERVAL_KINDS[NARROWER_KIND].label, INTERVAL_KINDS[NARROWER_KIND].answers
        se_all, low_all, high_all = robust.se, robust.ci_low, robust.ci_high
        judge_df = robust.details.get("df")
        interval_df = float(judge_df) if isinstance(judge_df, int | float) else None
    else:
        kind, label, answers = WALD_KIND, WALD_LABEL, WALD_NARROWER_ANSWERS
        se_all = [_number(v) for v in plain.se]
        low_all, high_all = [_number(v) for v in plain.ci_low], [_number(v) for v in plain.ci_high]
        interval_df = None
    se, df, low, high, reasons = [], [], [], [], []
    for k in range(judged.n_items):
        estimate, error = _number(plain.estimates[k]), _pick(se_all, k)
        reference = k == judged.reference
        reason = degenerate(estimate, error) if estimate is not None and not reference else ""
        fine = not reason and estimate is not None and not reference
        at_zero = 0.0 if reference else None  # the reference: 0 by definition
        se.append(error if fine else at_zero)
        df.append(interval_df if fine else None)
        low.append(_pick(low_all, k) if fine else at_zero)
        high.append(_pick(high_all, k) if fine else at_zero)
        reasons.append(reason)
    n_vignettes, n_judges = counts
    return Headline(
        interval=kind,
        label=f"{label} (narrower, no test)",
        answers=answers,
        df=df,
        n_vignettes=n_vignettes,
        n_judges=n_judges,
        level=0.95,
        se=se,
        p=[None] * judged.n_items,
        ci_low=low,
        ci_high=high,
        not_estimable=reasons,
        why=f"{why} {NARROWER_NOTE}",
        tested=False,
    )


def _pick(values: list, k: int) -> float | None:
    return _number(values[k]) if k < len(values) and values[k] is not None else None


def _number(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def tested_p(headline: Headline) -> np.ndarray:
    """The headline's p per system as an array (nan where there is none): Holm and stars are taken over these."""
    return np.array([math.nan if p is None else p for p in headline.p])
