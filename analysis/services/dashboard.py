"""What the study dashboard shows of a run: per question its table, diagnostics and problems; the halo."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from surveys.models import Study, question_label

from .. import plots
from ..models import AnalysisRun
from ..results import (
    ALTERNATIVE_READINGS,
    INTERVAL_KINDS,
    EffectEstimate,
    Halo,
    Headline,
    QuestionResult,
    RunResults,
    SystemAtFit,
    UnitFragility,
    VignetteFit,
)
from ..results.headline import headline_in_words, led_by_headline
from ..results.tables import SystemRow, alternative_columns, interval_columns, system_rows
from ..set_plots import set_marks_in_words
from .rank_claims import RankSection, rank_section
from .refits import RefitOutcome, RefitRequest
from .set_results import SetTable, set_table


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
class AlternativeColumn:
    name: str
    heading: str
    reading: str  # how to read it, in a sentence under the table ("" for a fit we have no words for)


@dataclass(frozen=True)
class LabelledClaim:
    """A significant result's fragility with the system's label."""

    label: str
    estimate: float
    p: float
    units: list[UnitFragility]


@dataclass(frozen=True)
class QuestionSection:
    key: str
    label: str  # the question's short label: headings and plots
    text: str
    n_judgments: int
    rows: list[SystemRow]  # best estimate first, systems without an estimate last
    interval_columns: list[IntervalColumn]
    alternative_columns: list[AlternativeColumn]  # the other fits' estimate columns
    problems: list[str]
    converged: bool | None
    order_effect: EffectEstimate | None
    first_position_rate: float | None
    separation_reliability: float | None
    split_half_reliability: float | None
    style_effect: EffectEstimate | None
    style_problems: list[str]
    by_vignette: list[VignetteFit]
    marks: str  # what each mark of the forest plot is, in words: the plot's alt text
    bias_reduced: bool = False  # the estimates are Firth's (the study's setting)
    bias_reduced_changes: list[EstimateChange] = field(default_factory=list)
    other: QuestionSection | None = None  # the same question in the study shown beside, if it has it
    marks_beside: str = ""  # the marks of the side-by-side plot (both studies' intervals)
    headline: Headline | None = None  # None: a run stored before the headline interval (it leads with Wald)
    headline_words: str = ""  # "Judge × answer robust CI, t with 11 df (12 vignettes, 400 judges)"
    ranks: RankSection | None = None  # None: the run has no rank claims for this question (stored before them)
    by_set: SetTable | None = None  # results per vignette set and the differences between sets, when it has sets
    set_marks: str = ""  # the marks of the by-set plot, in words: its alt text
    fragility: list[LabelledClaim] = field(default_factory=list)  # per significant system, how fragile it is


@dataclass(frozen=True)
class DashboardResults:
    systems: list[SystemAtFit]
    sections: list[QuestionSection]
    halo: Halo
    halo_rows: list[tuple[str, list[float | None]]]
    reference: str  # the reference system's label (the run's parameters keep its key)


def question_labels(study: Study) -> dict[str, str]:
    """Each question's short label by key (a key no longer in the study: the method's label, or the key)."""
    return {question.key: question.short_label for question in study.questions.all()}


def label_of(key: str, labels: dict[str, str]) -> str:
    return labels.get(key) or question_label(key)


def dashboard_results(*, run: AnalysisRun | None, beside: AnalysisRun | None = None) -> DashboardResults | None:
    """The run's results as the dashboard lays them out; with `beside`, that run's same questions too."""
    if run is None:
        return None
    fitted = run.read_results()
    labels = question_labels(run.study)
    beside_fitted = beside.read_results() if beside else None
    others = {s.key: s for s in _sections(beside_fitted, labels=labels)} if beside_fitted else {}
    sections = []
    for section in _sections(fitted, labels=labels):
        other = others.get(section.key)
        both: list[QuestionResult] = []
        if other and beside_fitted:
            mine, theirs = fitted.question(section.key), beside_fitted.question(section.key)
            assert mine is not None  # both runs have the section's question
            assert theirs is not None
            both = [mine, theirs]
        sections.append(replace(section, other=other, marks_beside=plots.marks_in_words(both) if other else ""))
    halo_rows = [
        (label_of(key, labels), row) for key, row in zip(fitted.halo.questions, fitted.halo.matrix, strict=False)
    ]
    halo = replace(fitted.halo, questions=[label_of(key, labels) for key in fitted.halo.questions])
    reference = run.parameters.get("reference", "")
    return DashboardResults(
        systems=fitted.systems,
        sections=sections,
        halo=halo,
        halo_rows=halo_rows,
        reference=fitted.labels().get(reference, reference),
    )


def _sections(fitted: RunResults, *, labels: dict[str, str]) -> list[QuestionSection]:
    return [
        _section(question, labels=fitted.labels(), label=label_of(question.question, labels))
        for question in fitted.questions
    ]


def _section(question: QuestionResult, *, labels: dict[str, str], label: str) -> QuestionSection:
    styled = question.alternative_fits.get("style_controlled")
    styled_fit = styled.fit if styled else None
    rows = system_rows(question, labels=labels)
    columns = []
    shown = led_by_headline(question)
    for kind, heading in interval_columns(shown):
        stored = shown.intervals.get(kind)
        # Known kinds are explained in today's words; a kind this code no longer knows, in its own.
        if kind in INTERVAL_KINDS:
            answers = INTERVAL_KINDS[kind].answers
        else:
            assert stored is not None  # a kind this code does not know is one the run stored
            answers = stored.answers
        columns.append(IntervalColumn(kind, heading, answers))
    return QuestionSection(
        key=question.question,
        label=label,
        text=question.text,
        n_judgments=question.n_judgments,
        rows=sorted(rows, key=lambda row: -(row.estimate if row.estimate is not None else -1e9)),
        interval_columns=columns,
        alternative_columns=[
            AlternativeColumn(name, heading, ALTERNATIVE_READINGS.get(name, ""))
            for name, heading in alternative_columns(question)
        ],
        problems=question.problems,
        converged=question.fit.converged if question.fit else None,
        order_effect=question.order_effect,
        first_position_rate=question.first_position_rate,
        separation_reliability=question.separation_reliability,
        split_half_reliability=question.split_half_reliability,
        style_effect=styled_fit.covariate_effects[0] if styled_fit and styled_fit.covariate_effects else None,
        style_problems=(styled.problems if styled else []) + (styled_fit.problems if styled_fit else []),
        by_vignette=question.by_vignette,
        marks=plots.marks_in_words([question]),
        bias_reduced="maximum_likelihood" in question.alternative_fits,
        bias_reduced_changes=_bias_reduced_changes(question, labels=labels),
        headline=question.headline,
        headline_words=headline_in_words(question.headline) if question.headline else "",
        ranks=rank_section(question.ranks, labels=labels) if question.ranks else None,
        by_set=_set_table(question, labels=labels),
        set_marks=set_marks_in_words(question.by_set) if question.by_set else "",
        fragility=[LabelledClaim(labels.get(c.system, c.system), c.estimate, c.p, c.units) for c in question.fragility],
    )


def _set_table(question: QuestionResult, *, labels: dict[str, str]) -> SetTable | None:
    if question.by_set is None or question.fit is None:
        return None
    systems = [item.item for item in question.fit.items]
    return set_table(question.by_set, systems=systems, labels=labels, reference=question.fit.reference)


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
            reported.estimate is None
            or beside.estimate is None
            or abs(reported.estimate - beside.estimate) < VISIBLE_CHANGE
        )
        if not unchanged:
            changes.append(EstimateChange(labels.get(reported.item, reported.item), beside.estimate, reported.estimate))
    return changes


def refit_said(asked: RefitRequest) -> tuple[bool, str]:
    """(is it bad news, what to tell the researcher) after "Refit now": refitted (with when), queued, or not."""
    run = asked.run
    if asked.outcome == RefitOutcome.RAN and run is not None:
        if run.status != AnalysisRun.Status.DONE:
            return True, f"The refit ran here (no task queue is configured) and failed: {run.error}"
        assert run.finished_at is not None  # a done run has finished
        finished = run.finished_at.strftime("%Y-%m-%d %H:%M UTC")
        return False, (
            f"Refitted: run {run.pk} finished at {finished} on {run.n_judgments} valid judgments, shown below. "
            "(No task queue is configured, so the refit ran in this request.)"
        )
    return asked.outcome == RefitOutcome.UNREACHABLE, asked.message
