"""Which interval a question's table leads with, and when a number is not worth printing.

The headline generalises over judges and vignettes (the judge x vignette cluster-robust interval, t with
vignettes - 1 df). With fewer than MIN_VIGNETTES vignettes, or where the two-way variance is not positive,
it cannot: the judge-robust interval leads instead, for the narrower question it answers (other judges,
these answers), and `why` says so in words. docs/statistics.md has the coverage study behind the rule.
"""

from __future__ import annotations

import math
from dataclasses import replace

from scipy import stats

from .shapes import FALLBACK_KIND, HEADLINE_KIND, INTERVAL_KINDS, Headline, Interval, ItemEstimate, QuestionResult

# Fewer vignettes than this: the two-way interval is not the headline. The coverage study (docs/statistics.md)
# found it covering 0.93-0.98 from 3 vignettes up wherever its variance is positive; 2 vignettes (t with 1 df)
# were not shown to work.
MIN_VIGNETTES = 3
# An SE above this on the log-odds scale (an odds ratio's interval spanning e^±20) says nothing: not estimable.
MAX_SE = 10.0


def degenerate(estimate: float | None, se: float | None, *, reference: bool = False) -> str:
    """Why a (estimate, SE) pair is not worth printing, in words; "" when it is."""
    if reference:
        return ""
    if estimate is None or se is None or not math.isfinite(se):
        return "no finite estimate or standard error"
    if se > MAX_SE:
        return f"standard error {se:.0f} on the log-odds scale: the data cannot tell this value from any other"
    if se <= 0:
        return "zero-width interval: the data hold no variation to estimate it from"
    return ""


def choose_headline(
    *, estimates: list[float | None], reference: int, intervals: dict[str, Interval], n_vignettes: int, n_judges: int
) -> Headline | None:
    """The headline interval of one question from its stored intervals and maximum-likelihood `estimates`."""
    why = _why_not_two_way(intervals.get(HEADLINE_KIND), estimates, reference, n_vignettes)
    kind = FALLBACK_KIND if why else HEADLINE_KIND
    chosen = intervals.get(kind)
    if chosen is None:
        return None
    df = chosen.details.get("df")
    df = int(df) if isinstance(df, int | float) else None
    se, p, low, high, reasons = [], [], [], [], []
    for k, estimate in enumerate(estimates):
        error = chosen.se[k] if k < len(chosen.se) else None
        reason = degenerate(estimate, error, reference=k == reference)
        fine = not reason and k != reference
        se.append(error if fine else (0.0 if k == reference else None))
        p.append(_p(estimate, error, df) if fine and estimate is not None and error is not None else None)
        low.append(chosen.ci_low[k] if fine else (0.0 if k == reference else None))
        high.append(chosen.ci_high[k] if fine else (0.0 if k == reference else None))
        reasons.append(reason)
    described = INTERVAL_KINDS[kind]
    return Headline(
        kind,
        described.label,
        described.answers,
        df,
        n_vignettes,
        n_judges,
        chosen.level,
        se,
        p,
        low,
        high,
        reasons,
        why,
    )


def _why_not_two_way(two_way: Interval | None, estimates: list, reference: int, n_vignettes: int) -> str:
    if n_vignettes < MIN_VIGNETTES:
        return (
            f"Only {n_vignettes} vignette{'s' if n_vignettes != 1 else ''}: too few to generalise over vignettes "
            f"(the judge × vignette interval needs at least {MIN_VIGNETTES} to cover 95%). This interval "
            "generalises over judges, for these answers."
        )
    if two_way is None:
        return "The judge × vignette interval could not be computed here. This interval generalises over judges, for these answers."
    not_positive = [
        k
        for k, estimate in enumerate(estimates)
        if k != reference and estimate is not None and (k >= len(two_way.se) or two_way.se[k] is None)
    ]
    if not_positive:
        return (
            "The judge × vignette variance is not positive here (it can be, with few vignettes), so it cannot "
            "say how far the results generalise over vignettes. This interval generalises over judges, for these answers."
        )
    return ""


def _p(estimate: float, se: float, df: int | None) -> float:
    z = abs(estimate / se)
    return float(2 * (stats.norm.sf(z) if df is None else stats.t.sf(z, df)))


WALD_KIND = "wald"
WALD_LABEL = "Wald CI (conditional on these answers)"
WALD_ANSWERS = (
    "These very answers, judged independently: treats every judgment as independent, so it is the narrowest, and "
    "too narrow when judges or vignettes (answers) favour a system more than others. It does not generalise to other "
    "answers of the same systems."
)


def led_by_headline(question: QuestionResult) -> QuestionResult:
    """The question as its tables, plots and exports show it: each system's SE, p and interval from the
    headline, the Wald interval among the other intervals (first), the headline's own kind not repeated there.

    A run stored before the headline (schema 2) is returned as it is: it leads with the Wald interval."""
    headline, fit = question.headline, question.fit
    if headline is None or fit is None:
        return question
    items = [_led(item, headline, k) for k, item in enumerate(fit.items)]
    wald = Interval(
        label=WALD_LABEL,
        answers=WALD_ANSWERS,
        level=0.95,
        ci_low=[item.ci_low for item in fit.items],
        ci_high=[item.ci_high for item in fit.items],
        se=[item.se for item in fit.items],
    )
    others = {kind: interval for kind, interval in question.intervals.items() if kind != headline.interval}
    return replace(question, fit=replace(fit, items=items), intervals={WALD_KIND: wald, **others})


def _led(item: ItemEstimate, headline: Headline, k: int) -> ItemEstimate:
    reason = headline.not_estimable[k] if k < len(headline.not_estimable) else ""
    if item.estimate is None:
        return item
    if reason:
        return replace(item, estimate=None, se=None, z=None, p=None, ci_low=None, ci_high=None,
                       not_estimable=f"not estimable here: {reason}")  # fmt: skip
    se = headline.se[k]
    z = item.estimate / se if se else None
    return replace(item, se=se, z=z, p=headline.p[k], ci_low=headline.ci_low[k], ci_high=headline.ci_high[k])


def headline_in_words(headline: Headline) -> str:
    """ "Judge × answer robust CI, t with 11 df (12 vignettes, 400 judges)": what the lead columns are."""
    df = f"t with {headline.df} df" if headline.df is not None else "normal reference"
    return f"{headline.label}, {df} ({headline.n_vignettes} vignettes, {headline.n_judges} judges)"
