"""What the study dashboard shows of a run: per question its table, diagnostics and problems; the halo."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..models import AnalysisRun
from ..results import EffectEstimate, Halo, QuestionResult, RunResults, SystemAtFit, VignetteFit
from ..results.tables import SystemRow, alternative_columns, interval_columns, system_rows


@dataclass(frozen=True)
class IntervalColumn:
    kind: str
    heading: str
    answers: str  # the question this interval answers, shown under the table


@dataclass(frozen=True)
class QuestionSection:
    key: str
    text: str
    n_judgments: int
    rows: list[SystemRow]  # best estimate first, systems without an estimate last
    interval_columns: list[IntervalColumn]
    alternative_columns: list[tuple[str, str]]  # (name, heading) of the other fits' estimate columns
    problems: list[str]
    converged: bool | None
    order_effect: EffectEstimate | None
    first_position_rate: float | None
    separation_reliability: float | None
    split_half_reliability: float | None
    style_effect: EffectEstimate | None
    style_problems: list[str]
    by_vignette: list[VignetteFit]
    other: QuestionSection | None = None  # the same question in the study shown beside, if it has it


@dataclass(frozen=True)
class DashboardResults:
    systems: list[SystemAtFit]
    sections: list[QuestionSection]
    halo: Halo
    halo_rows: list[tuple[str, list[float | None]]]


def dashboard_results(*, run: AnalysisRun | None, beside: AnalysisRun | None = None) -> DashboardResults | None:
    """The run's results as the dashboard lays them out; with `beside`, that run's same questions too."""
    if run is None:
        return None
    fitted = run.read_results()
    others = {s.key: s for s in _sections(beside.read_results())} if beside else {}
    sections = [replace(section, other=others.get(section.key)) for section in _sections(fitted)]
    halo_rows = list(zip(fitted.halo.questions, fitted.halo.matrix, strict=False))
    return DashboardResults(systems=fitted.systems, sections=sections, halo=fitted.halo, halo_rows=halo_rows)


def _sections(fitted: RunResults) -> list[QuestionSection]:
    return [_section(question, labels=fitted.labels()) for question in fitted.questions]


def _section(question: QuestionResult, *, labels: dict[str, str]) -> QuestionSection:
    styled = question.alternative_fits.get("style_controlled")
    styled_fit = styled.fit if styled else None
    rows = system_rows(question, labels=labels)
    columns = []
    for kind, heading in interval_columns(question):
        stored = question.intervals.get(kind)
        columns.append(IntervalColumn(kind, heading, stored.answers if stored else ""))
    return QuestionSection(
        key=question.question,
        text=question.text,
        n_judgments=question.n_judgments,
        rows=sorted(rows, key=lambda row: -(row.estimate if row.estimate is not None else -1e9)),
        interval_columns=columns,
        alternative_columns=alternative_columns(question),
        problems=question.problems,
        converged=question.fit.converged if question.fit else None,
        order_effect=question.order_effect,
        first_position_rate=question.first_position_rate,
        separation_reliability=question.separation_reliability,
        split_half_reliability=question.split_half_reliability,
        style_effect=(styled_fit.covariate_effects or [None])[0] if styled_fit else None,
        style_problems=(styled.problems if styled else []) + (styled_fit.problems if styled_fit else []),
        by_vignette=question.by_vignette,
    )
