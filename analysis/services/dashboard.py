"""What the study dashboard shows of a run: per question its table, diagnostics and problems; the halo."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..models import AnalysisRun
from ..results import EffectEstimate, Halo, QuestionResult, RunResults, SystemAtFit, VignetteFit
from ..results.tables import SystemRow, alternative_columns, interval_columns, system_rows


@dataclass(frozen=True)
class IntervalColumn:
    kind: str
    heading: str
    answers: str  # the question this interval answers, shown under the table


@dataclass(frozen=True)
class EstimateChange:
    """A system whose reported (bias-reduced) estimate differs from its maximum-likelihood one."""

    label: str
    plain: float | None  # None: no finite maximum-likelihood estimate (the system never won or never lost)
    bias_reduced: float | None


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
    bias_reduced: bool = False  # the estimates are Firth's (the study's setting)
    bias_reduced_changes: list[EstimateChange] = field(default_factory=list)
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
        bias_reduced="maximum_likelihood" in question.alternative_fits,
        bias_reduced_changes=_bias_reduced_changes(question, labels=labels),
    )


# Estimates are shown to three decimals: a smaller change is no change a reader could see.
VISIBLE_CHANGE = 0.0005


def _bias_reduced_changes(question: QuestionResult, *, labels: dict[str, str]) -> list[EstimateChange]:
    """Where the study's bias-reduced setting changed an estimate from the maximum-likelihood one."""
    plain = question.alternative_fits.get("maximum_likelihood")
    if plain is None or plain.fit is None or question.fit is None:
        return []
    changes = []
    for reported, beside in zip(question.fit.items, plain.fit.items, strict=True):
        unchanged = (reported.estimate is None) == (beside.estimate is None) and (
            reported.estimate is None or abs(reported.estimate - beside.estimate) < VISIBLE_CHANGE
        )
        if not unchanged:
            changes.append(EstimateChange(labels.get(reported.item, reported.item), beside.estimate, reported.estimate))
    return changes
