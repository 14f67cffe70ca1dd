"""One row per system of a question: what the dashboard's table and results.csv show."""

from __future__ import annotations

from dataclasses import dataclass

from .shapes import INTERVAL_KINDS, QuestionResult


@dataclass(frozen=True)
class Bounds:
    kind: str
    low: float | None
    high: float | None


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
    ci_low: float | None  # Wald
    ci_high: float | None
    intervals: list[Bounds]  # in interval_columns() order, (None, None) where the run has none
    style_estimate: float | None
    style_se: float | None
    wins: int
    losses: int

    def bounds(self, kind: str) -> Bounds:
        return next((b for b in self.intervals if b.kind == kind), Bounds(kind, None, None))


def interval_columns(question: QuestionResult) -> list[tuple[str, str]]:
    """(kind, heading) of every interval column: the kinds known today, then any other the run stored."""
    kinds = dict.fromkeys([*INTERVAL_KINDS, *question.intervals])
    return [
        (kind, question.intervals[kind].label if kind in question.intervals else INTERVAL_KINDS[kind].label)
        for kind in kinds
    ]


def system_rows(question: QuestionResult, *, labels: dict[str, str]) -> list[SystemRow]:
    """The question's systems in the run's item order; none when it has no fit."""
    if question.fit is None:
        return []
    styled = question.alternative_fits.get("style_controlled")
    styled_items = styled.fit.items if styled and styled.fit else None
    columns = [kind for kind, _heading in interval_columns(question)]
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
                style_estimate=styled_items[k].estimate if styled_items else None,
                style_se=styled_items[k].se if styled_items else None,
                wins=item.wins,
                losses=item.losses,
            )
        )
    return rows
