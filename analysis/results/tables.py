"""One row per system of a question: what the dashboard's table and results.csv show."""

from __future__ import annotations

from dataclasses import dataclass

from .headline import WALD_KIND, led_by_headline
from .shapes import ALTERNATIVE_FITS, INTERVAL_KINDS, QuestionResult


@dataclass(frozen=True)
class Bounds:
    kind: str
    low: float | None
    high: float | None


@dataclass(frozen=True)
class Alternative:
    name: str
    estimate: float | None
    se: float | None
    ci_low: float | None = None  # its Wald 95% interval (the reference's is [0, 0])
    ci_high: float | None = None
    not_estimable: str = ""


@dataclass(frozen=True)
class SystemRow:
    question: str
    system: str
    label: str
    estimate: float | None
    se: float | None
    z: float | None
    p: float | None
    p_holm: float | None
    stars: str
    ci_low: float | None  # the headline interval's (the Wald one's for a run stored before it)
    ci_high: float | None
    intervals: list[Bounds]  # in interval_columns() order, (None, None) where the run has none
    alternatives: list[Alternative]  # in alternative_columns() order, None where that fit has no estimate
    wins: int
    losses: int
    not_estimable: str = ""  # "not estimable here: <reason>" in place of the numbers
    df: float | None = None  # the t reference of the lead interval (the headline test's Satterthwaite df)

    def bounds(self, kind: str) -> Bounds:
        return next((b for b in self.intervals if b.kind == kind), Bounds(kind, None, None))

    def alternative(self, name: str) -> Alternative:
        return next((a for a in self.alternatives if a.name == name), Alternative(name, None, None))


def interval_columns(question: QuestionResult) -> list[tuple[str, str]]:
    """(kind, heading) of every interval column of the question as `led_by_headline` shows it: the Wald
    interval, the kinds known today, then any other the run stored; never the headline's kind again."""
    known = [kind for kind in INTERVAL_KINDS if not (question.headline and kind == question.headline.interval)]
    wald = [WALD_KIND] if WALD_KIND in question.intervals else []
    kinds = dict.fromkeys([*wald, *known, *question.intervals])
    return [
        (kind, question.intervals[kind].label if kind in question.intervals else INTERVAL_KINDS[kind].label)
        for kind in kinds
    ]


def alternative_columns(question: QuestionResult) -> list[tuple[str, str]]:
    """(name, heading) of every other fit the run stored: in ALTERNATIVE_FITS order, then any other."""
    names = [name for name in ALTERNATIVE_FITS if name in question.alternative_fits]
    names += [name for name in question.alternative_fits if name not in ALTERNATIVE_FITS]
    return [(name, question.alternative_fits[name].label) for name in names]


def system_rows(question: QuestionResult, *, labels: dict[str, str]) -> list[SystemRow]:
    """The question's systems in the run's item order, led by the headline interval; none when it has no fit."""
    question = led_by_headline(question)
    if question.fit is None:
        return []
    columns = [kind for kind, _heading in interval_columns(question)]
    others = {
        name: fit.items
        for name, _heading in alternative_columns(question)
        if name in question.alternative_fits and (fit := question.alternative_fits[name].fit)
    }
    headline_df = question.headline.df if question.headline else []
    rows = []
    for k, item in enumerate(question.fit.items):
        intervals = []
        for kind in columns:
            interval = question.intervals.get(kind)
            low, high = (interval.ci_low[k], interval.ci_high[k]) if interval else (None, None)
            intervals.append(Bounds(kind, low, high))
        rows.append(
            SystemRow(
                question=question.question,
                system=item.item,
                label=labels.get(item.item, item.item),
                estimate=item.estimate,
                se=item.se,
                z=item.z,
                p=item.p,
                p_holm=question.holm_p[k] if k < len(question.holm_p) else None,
                stars=question.stars[k] if k < len(question.stars) else "",
                ci_low=item.ci_low,
                ci_high=item.ci_high,
                intervals=intervals,
                alternatives=[
                    _alternative(name, others[name][k]) if name in others else Alternative(name, None, None)
                    for name, _heading in alternative_columns(question)
                ],
                wins=item.wins,
                losses=item.losses,
                not_estimable=item.not_estimable,
                df=headline_df[k] if k < len(headline_df) and item.ci_low is not None else None,
            )
        )
    return rows


def _alternative(name: str, item) -> Alternative:
    return Alternative(name, item.estimate, item.se, item.ci_low, item.ci_high, item.not_estimable)
