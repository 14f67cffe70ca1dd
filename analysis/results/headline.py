"""What a question's table leads with (its Headline), how the other columns follow it, and when a number is
not worth printing.

The headline is the headline test (analysis.bradley_terry.headline_test: CR2 over vignettes with the judge
design effect, Satterthwaite df per system), built by analysis.services.headline. Where it cannot generalise
(fewer than 3 vignettes, one judge) the table leads with a narrower interval, labelled as such, and no p,
Holm p or stars; `why` says so in words. docs/statistics.md has the rule and the coverage study behind it.
"""

from __future__ import annotations

import math
from dataclasses import replace

from .shapes import Headline, Interval, ItemEstimate, QuestionResult

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
    if headline.interval == WALD_KIND:  # the narrower interval with one judge: the Wald one already leads
        return replace(question, fit=replace(fit, items=items))
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
    z = item.estimate / se if se and headline.tested else None  # no test statistic where no test is shown
    return replace(item, se=se, z=z, p=headline.p[k], ci_low=headline.ci_low[k], ci_high=headline.ci_high[k])


def headline_in_words(headline: Headline) -> str:
    """ "Judge × vignette CR2 CI, t with 4.1–9.8 df (Satterthwaite, per system); 12 vignettes, 400 judges": what
    the lead columns are (the narrower interval's label says "no test")."""
    counts = f"{headline.n_vignettes} vignette{'' if headline.n_vignettes == 1 else 's'}, {headline.n_judges} judges"
    if not headline.tested:
        return f"{headline.label}; {counts}"
    df = headline.df_in_words() or "normal reference"
    return f"{headline.label}, {df}; {counts}"
