"""Forest plots like the source study's figures, drawn with matplotlib's Agg backend.

Each system's estimate against the reference with its 95% Wald interval as a horizontal error
bar, the participant-clustered bootstrap interval as a thinner grey bar when the run has one,
and a dotted vertical line at 0 (the reference). Figures are built with `Figure` directly (no
pyplot state), so concurrent requests cannot draw on each other's axes.
"""

from __future__ import annotations

import io
import math
from typing import NamedTuple

import matplotlib

matplotlib.use("Agg")

from matplotlib import rc_context
from matplotlib.figure import Figure

from .results import ItemEstimate, QuestionResult, SystemAtFit

CONTENT_TYPES = {"svg": "image/svg+xml", "png": "image/png"}


def _plain(text: str) -> str:
    """Labels are shown as typed: no mathtext from a '$' in a system's label."""
    return str(text).replace("$", r"\$")


class Panel(NamedTuple):
    """One study's question: its systems at fit time, the question's result, the panel's title."""

    systems: list[SystemAtFit]
    result: QuestionResult
    title: str


def forest_plot(*, systems: list[SystemAtFit], result: QuestionResult, title: str) -> Figure:
    """One question's estimates, best at the top; systems without an estimate say so."""
    rows = _rows(systems, result)
    figure = Figure(figsize=(6.4, 0.45 * max(len(rows), 2) + 1.3))
    _draw(figure.subplots(), rows, _reference_label(systems, result), title)
    figure.tight_layout()
    return figure


def comparison_plot(*, panels: list[Panel]) -> Figure:
    """Studies side by side (e.g. Experiment 1 and 2) on one shared x axis, one panel each."""
    rows = [_rows(panel.systems, panel.result) for panel in panels]
    height = 0.45 * max([len(r) for r in rows] + [2]) + 1.3
    figure = Figure(figsize=(5.2 * len(panels), height))
    axes = figure.subplots(1, len(panels), sharex=True, squeeze=False)[0]
    for ax, panel_rows, panel in zip(axes, rows, panels, strict=True):
        _draw(ax, panel_rows, _reference_label(panel.systems, panel.result), panel.title)
    figure.tight_layout()
    return figure


def _reference_label(systems: list[SystemAtFit], result: QuestionResult) -> str:
    reference = result.fit.reference if result.fit else ""
    return {s.key: s.label for s in systems}.get(reference, reference)


def _rows(
    systems: list[SystemAtFit], result: QuestionResult
) -> list[tuple[ItemEstimate, str, float | None, float | None]]:
    """(item, label, bootstrap low, bootstrap high), lowest estimate first (drawn at the bottom)."""
    if result.fit is None:
        return []
    labels = {s.key: s.label for s in systems}
    boot = result.intervals.get("bootstrap")
    rows = [
        (item, labels.get(item.item, item.item), boot.ci_low[k] if boot else None, boot.ci_high[k] if boot else None)
        for k, item in enumerate(result.fit.items)
    ]
    rows.sort(key=lambda row: -math.inf if row[0].estimate is None else row[0].estimate)
    return rows


def _draw(axes, rows: list[tuple], reference: str, title: str) -> None:
    positions = list(range(len(rows)))
    for y, (item, _label, boot_low, boot_high) in zip(positions, rows, strict=True):
        if item.estimate is None:
            axes.text(0, y, "no estimate", va="center", ha="center", fontsize=8, color="#a31515")
            continue
        if boot_low is not None and boot_high is not None:
            axes.plot([boot_low, boot_high], [y - 0.18, y - 0.18], color="#9aa3b2", linewidth=1.2)
        low, high = item.ci_low, item.ci_high
        if low is not None and high is not None and high > low:
            axes.errorbar(
                item.estimate,
                y,
                xerr=[[item.estimate - low], [high - item.estimate]],
                fmt="o",
                color="#2456a6",
                ecolor="#2456a6",
                capsize=3,
                markersize=5,
            )
        else:  # the reference: fixed at 0, no interval
            axes.plot([item.estimate], [y], marker="D", color="#1d2330", markersize=5)
    axes.axvline(0.0, color="#1d2330", linestyle=":", linewidth=1.2)
    axes.set_yticks(positions, labels=[_plain(label) for _item, label, *_ in rows])
    axes.set_ylim(-0.7, max(len(rows), 1) - 0.3)
    axes.set_xlabel(_plain(f"Log-ability relative to {reference} (95% CI)"))
    axes.set_title(_plain(title), fontsize=10, loc="left")
    axes.grid(axis="x", color="#e4e7ec", linewidth=0.6)


def render(figure: Figure, fmt: str) -> bytes:
    """SVG (text kept as text, so labels are searchable) or PNG bytes."""
    if fmt not in CONTENT_TYPES:
        raise ValueError(f"format must be svg or png, not {fmt!r}.")
    buffer = io.BytesIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "moraljudge"}):
        metadata = {"Date": None} if fmt == "svg" else {}
        figure.savefig(buffer, format=fmt, dpi=150, metadata=metadata)
    return buffer.getvalue()
