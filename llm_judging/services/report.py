"""The researcher page's read-out: agreement rows, estimate rows and forest-plot inputs, from one read."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, fields

from analysis.csv_text import csv_lines
from analysis.results.shapes import Fit, ItemEstimate, QuestionResult, SystemAtFit
from surveys.models import Study

from .agreement import AgreementRow, agreement_rows
from .data import read_study_picks
from .estimates import EstimateRow, estimate_rows, llm_fit, why_no_help

AGREEMENT_COLUMNS = [f.name for f in fields(AgreementRow)]
ESTIMATE_COLUMNS = [f.name for f in fields(EstimateRow)]
EXPORTS = ("llm-agreement.csv", "llm-estimates.csv")


def judging_report(*, study: Study) -> dict:
    data = read_study_picks(study=study)
    estimates = estimate_rows(study=study, data=data)
    return {
        "data": data,
        "agreement": agreement_rows(study=study, data=data),
        "estimates": estimates,
        "no_help": judges_without_help(estimates),
    }


def judges_without_help(estimates: list[EstimateRow]) -> list[tuple[str, str, str]]:
    """(question, judge, why) for each judge × question where PPI could not use the judge (lambda 0)."""
    found: dict[tuple[str, str], str] = {}
    for row in estimates:
        reason = why_no_help(row)
        if reason:
            found.setdefault((row.question, row.judge), reason)
    return [(question, judge, reason) for (question, judge), reason in found.items()]


def export_lines(*, study: Study, name: str) -> Iterator[str]:
    """llm-agreement.csv or llm-estimates.csv one line at a time, for a streamed download; KeyError for another
    name (raised before the first line, so a view can still answer 404)."""
    key, columns = {"llm-agreement.csv": ("agreement", AGREEMENT_COLUMNS),
                    "llm-estimates.csv": ("estimates", ESTIMATE_COLUMNS)}[name]  # fmt: skip
    report = judging_report(study=study)
    return csv_lines(columns, (asdict(row) for row in report[key]))


def plot_inputs(*, study: Study, question: str, judge: str, kind: str):
    """(systems, result) typed for analysis.plots.forest_plot: the judge's own fit ("llm") or the PPI one ("ppi")."""
    data = read_study_picks(study=study)
    systems = [SystemAtFit(s.key, s.label, s.kind) for s in study.systems.order_by("position", "id")]
    if kind == "llm":
        fit = llm_fit(data, judge=judge, question=question)
        return (systems, typed(question, fit)) if fit else None
    rows = [r for r in estimate_rows(study=study, data=data) if r.question == question and r.judge == judge]
    if not rows or rows[0].ppi_estimate is None:
        return None
    items = [{"item": data.reference, "estimate": 0.0, "ci_low": None, "ci_high": None}]
    items += [{"item": r.system, "estimate": r.ppi_estimate, "ci_low": r.ppi_low, "ci_high": r.ppi_high} for r in rows]
    return systems, typed(question, {"items": items, "reference": data.reference})


def typed(question: str, fit: dict) -> QuestionResult:
    """A fit dict (BTResult.as_dict() or PPI rows) as the QuestionResult the plots draw: estimates and intervals."""
    items = [
        ItemEstimate(
            item=i["item"],
            estimate=i.get("estimate"),
            se=None,
            z=None,
            p=None,
            ci_low=i.get("ci_low"),
            ci_high=i.get("ci_high"),
            wins=0,
            losses=0,
        )
        for i in fit["items"]
    ]
    shaped = Fit(reference=fit["reference"], n_comparisons=0, log_likelihood=None, deviance=None, null_deviance=None,
                 converged=True, iterations=0, items=items)  # fmt: skip
    return QuestionResult(question=question, text=question, position=0, n_judgments=0, fit=shaped)
