"""Forest plots like the source study's figures, drawn with matplotlib's Agg backend.

Each system's estimate against the reference with its 95% Wald interval as a horizontal error
bar, every other interval the run stored (judge bootstrap, judge × answer robust and bootstrap)
as a thinner bar of its own colour just below it, the reference as a diamond and a dotted
vertical line at 0. A legend under the plot names every mark drawn; `marks()` gives the same
names to the page's alt text. Figures are built with `Figure` directly (no pyplot state), so
concurrent requests cannot draw on each other's axes.
"""

from __future__ import annotations

import io
import math
import textwrap
from typing import NamedTuple

import matplotlib

matplotlib.use("Agg")

from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .results import INTERVAL_KINDS, Interval, ItemEstimate, QuestionResult, SystemAtFit
from .results.headline import WALD_KIND, led_by_headline

CONTENT_TYPES = {"svg": "image/svg+xml", "png": "image/png"}
WALD = "95% Wald CI (each judgment independent)"
ESTIMATE_COLOUR = "#2456a6"
REFERENCE_COLOUR = "#1d2330"
# Each extra interval kind keeps its look across plots; a kind not listed here takes the next spare one.
INTERVAL_STYLES: dict[str, dict[str, object]] = {
    WALD_KIND: {"color": "#b45309", "linestyle": "-"},
    "bootstrap": {"color": "#8a94a6", "linestyle": "-"},
    "two_way_robust": {"color": "#c2410c", "linestyle": "--"},
    "two_way_bootstrap": {"color": "#15803d", "linestyle": (0, (1, 1))},
}
SPARE_STYLES: list[dict[str, object]] = [
    {"color": "#7c3aed", "linestyle": "-."},
    {"color": "#0e7490", "linestyle": "-."},
]
ROW_INCHES = 0.45
EXTRA_ROW_INCHES = 0.12  # per extra interval kind: each sits a little lower under its estimate
LEGEND_LINE_INCHES = 0.2


def _plain(text: str) -> str:
    """Labels are shown as typed: no mathtext from a '$' in a system's label."""
    return str(text).replace("$", r"\$")


class Panel(NamedTuple):
    """One study's question: its systems at fit time, the question's result, the panel's title."""

    systems: list[SystemAtFit]
    result: QuestionResult
    title: str


class Mark(NamedTuple):
    """One kind of mark a plot draws: its legend text, and how the page's alt text describes it."""

    legend: str
    looks: str  # "blue dot and bar", said in the alt text before the legend text
    handle: Line2D


# A phone's width (the dashboard at 390 px): drawn at about its natural size there, so 8-point text stays
# about 10 px on screen instead of the 6 px the wide plot scaled down gives; long labels and legends wrap.
NARROW_INCHES = 3.7
NARROW_WRAP = {"label": 16, "legend": 44, "title": 40}


def forest_plot(
    *,
    systems: list[SystemAtFit],
    result: QuestionResult,
    title: str,
    interval_label: str = WALD,
    narrow: bool = False,
) -> Figure:
    """One question's estimates, best at the top; systems without an estimate say so. The main bar is the
    question's headline interval (the Wald one for a run stored before it, or a result without one).
    `narrow`: for a phone's width (NARROW_INCHES), labels and legend wrapped."""
    result = led_by_headline(result)
    rows = _rows(systems, result)
    kinds = _extra_kinds([result])
    shown = marks([result], interval_label=interval_label)
    legend_lines = _legend_lines(shown, narrow)
    figure = _figure(
        width=NARROW_INCHES if narrow else 6.4, n_rows=len(rows), n_kinds=len(kinds), n_marks=legend_lines,
        label_lines=_label_lines(rows, narrow),
    )  # fmt: skip
    _draw(figure.subplots(), rows, kinds, _reference_label(systems, result), title, narrow=narrow)
    _legend(figure, shown, narrow=narrow)
    return figure


def comparison_plot(
    *, panels: list[Panel], title: str = "", interval_label: str = WALD, narrow: bool = False
) -> Figure:
    """Studies side by side (e.g. Experiment 1 and 2) on one shared x axis, one panel each, one legend;
    `narrow`: one above the other, for a phone's width."""
    panels = [panel._replace(result=led_by_headline(panel.result)) for panel in panels]
    rows = [_rows(panel.systems, panel.result) for panel in panels]
    results = [panel.result for panel in panels]
    kinds = _extra_kinds(results)
    shown = marks(results, interval_label=interval_label)
    if narrow:
        heights = [max(len(r), 2) for r in rows]
        figure = _figure(
            width=NARROW_INCHES, n_rows=sum(heights), n_kinds=len(kinds), n_marks=_legend_lines(shown, True),
            label_lines=max(_label_lines(r, True) for r in rows),
        )  # fmt: skip
        figure.set_figheight(figure.get_figheight() + 0.6 * (len(panels) - 1))  # a title and axis per panel
        axes = figure.subplots(len(panels), 1, sharex=True, squeeze=False, height_ratios=heights)[:, 0]
    else:
        figure = _figure(
            width=5.2 * len(panels), n_rows=max(len(r) for r in rows), n_kinds=len(kinds), n_marks=len(shown), ncols=2
        )
        axes = figure.subplots(1, len(panels), sharex=True, squeeze=False)[0]
    for ax, panel_rows, panel in zip(axes, rows, panels, strict=True):
        _draw(ax, panel_rows, kinds, _reference_label(panel.systems, panel.result), panel.title, narrow=narrow)
    if title:
        figure.suptitle(_wrapped(title, narrow, "title"), fontsize=11, x=0.02, ha="left")
    _legend(figure, shown, ncols=2 if len(panels) > 1 and not narrow else 1, narrow=narrow)
    return figure


def _wrapped(text: str, narrow: bool, kind: str) -> str:
    return _plain(textwrap.fill(str(text), NARROW_WRAP[kind]) if narrow else text)


def _legend_lines(shown: list[Mark], narrow: bool) -> int:
    return sum(_wrapped(mark.legend, narrow, "legend").count("\n") + 1 for mark in shown)


def _label_lines(rows: list[Row], narrow: bool) -> int:
    """The most lines a system's label wraps to (a row holds two at the row height, more need room)."""
    return max((_wrapped(row.label, narrow, "label").count("\n") + 1 for row in rows), default=1)


def marks(results: list[QuestionResult], *, interval_label: str = WALD) -> list[Mark]:
    """Every kind of mark the plot of these results draws, in the legend's order."""
    results = [led_by_headline(result) for result in results]
    interval_label = _main_label(results, interval_label)
    items = [item for result in results if result.fit for item in result.fit.items]
    shown = []
    if any(_has_interval(item) for item in items):
        handle = Line2D([], [], color=ESTIMATE_COLOUR, marker="o", markersize=5, linewidth=1.5)
        # With the study's bias-reduced setting the dots are Firth's estimates (the ML fit is stored beside them).
        firth = any("maximum_likelihood" in result.alternative_fits for result in results)
        estimate = "Bias-reduced (Firth) estimate" if firth else "Estimate"
        shown.append(Mark(f"{estimate} and {interval_label}", "blue dot and bar", handle))
    for kind, interval in _extra_kinds(results).items():
        style = _style(kind, list(_extra_kinds(results)))
        described = INTERVAL_KINDS.get(kind)
        legend = f"{interval.level:.0%} {interval.label}"
        if described and described.mark:
            legend += f" ({described.mark})"
        shown.append(Mark(legend, f"thin {style['name']} bar", Line2D([], [], linewidth=1.2, **style["line"])))
    if any(item.estimate is not None and not _has_interval(item) for item in items):
        handle = Line2D([], [], color=REFERENCE_COLOUR, marker="D", markersize=5, linestyle="none")
        shown.append(Mark("Reference system (0 by definition)", "black diamond", handle))
    handle = Line2D([], [], color=REFERENCE_COLOUR, linestyle=":", linewidth=1.2)
    shown.append(Mark("0: as good as the reference", "dotted line", handle))
    return shown


def marks_in_words(results: list[QuestionResult], *, interval_label: str = WALD) -> str:
    """The legend as a sentence, for the page's alt text: "Blue dot and bar: estimate and …; dotted line: …"."""
    said = "; ".join(
        f"{mark.looks}: {mark.legend[0].lower()}{mark.legend[1:]}"
        for mark in marks(results, interval_label=interval_label)
    )
    return f"{said[0].upper()}{said[1:]}."


def _main_label(results: list[QuestionResult], interval_label: str) -> str:
    """The main bar's name: the headline's when every result has one of the same kind, else as given."""
    kinds = {(r.headline.interval, r.headline.label) for r in results if r.headline}
    if interval_label != WALD or len(kinds) != 1 or any(r.headline is None for r in results):
        return interval_label
    (_kind, label), first = kinds.pop(), results[0].headline
    df = first.df_in_words() if first and first.tested else ""
    return f"95% {label}" + (f", {df}" if len(results) == 1 and df else "")


def _has_interval(item: ItemEstimate) -> bool:
    return (
        item.estimate is not None
        and item.ci_low is not None
        and item.ci_high is not None
        and item.ci_high > item.ci_low
    )


def _extra_kinds(results: list[QuestionResult]) -> dict:
    """The other interval kinds these results stored with at least one bound, known kinds first."""
    kinds: dict[str, Interval] = {}
    for result in results:
        for kind, interval in result.intervals.items():
            if any(low is not None for low in interval.ci_low):
                kinds.setdefault(kind, interval)
    order = [WALD_KIND, *INTERVAL_KINDS]
    return dict(sorted(kinds.items(), key=lambda pair: order.index(pair[0]) if pair[0] in order else len(order)))


COLOUR_NAMES = {"#8a94a6": "grey", "#c2410c": "orange dashed", "#15803d": "green dotted", "#7c3aed": "purple",
                "#b45309": "brown", "#0e7490": "teal dash-dotted"}  # fmt: skip


def _style(kind: str, kinds: list[str]) -> dict:
    line: dict[str, object]
    if kind in INTERVAL_STYLES:
        line = INTERVAL_STYLES[kind]
    else:
        spare = [k for k in kinds if k not in INTERVAL_STYLES].index(kind)
        line = SPARE_STYLES[spare % len(SPARE_STYLES)]
    return {"line": line, "name": COLOUR_NAMES[str(line["color"])]}


def _figure(*, width: float, n_rows: int, n_kinds: int, n_marks: int, ncols: int = 1, label_lines: int = 1) -> Figure:
    legend_lines = math.ceil(n_marks / ncols) if ncols > 1 else n_marks
    row = max(ROW_INCHES, 0.16 * label_lines)
    height = (row + EXTRA_ROW_INCHES * n_kinds) * max(n_rows, 2) + 1.3 + LEGEND_LINE_INCHES * legend_lines
    return Figure(figsize=(width, height), layout="constrained")


def _legend(figure: Figure, shown: list[Mark], *, ncols: int = 1, narrow: bool = False) -> None:
    figure.legend(
        handles=[mark.handle for mark in shown],
        labels=[_wrapped(mark.legend, narrow, "legend") for mark in shown],
        loc="outside lower left",
        ncols=ncols,
        fontsize=8,
        frameon=False,
    )


def _reference_label(systems: list[SystemAtFit], result: QuestionResult) -> str:
    reference = result.fit.reference if result.fit else ""
    return {s.key: s.label for s in systems}.get(reference, reference)


class Row(NamedTuple):
    item: ItemEstimate
    label: str
    bounds: dict[str, tuple[float | None, float | None]]  # extra interval kind -> (low, high)


def _rows(systems: list[SystemAtFit], result: QuestionResult) -> list[Row]:
    """One row per system, lowest estimate first (drawn at the bottom)."""
    if result.fit is None:
        return []
    labels = {s.key: s.label for s in systems}
    rows = [
        Row(item, labels.get(item.item, item.item), {
            kind: (interval.ci_low[k], interval.ci_high[k]) for kind, interval in result.intervals.items()
            if k < len(interval.ci_low)
        })
        for k, item in enumerate(result.fit.items)
    ]  # fmt: skip
    rows.sort(key=lambda row: -math.inf if row.item.estimate is None else row.item.estimate)
    return rows


def _draw(axes, rows: list[Row], kinds: dict, reference: str, title: str, *, narrow: bool = False) -> None:
    positions = list(range(len(rows)))
    step = 0.5 / (len(kinds) + 1)  # the extra bars share the half-row under each estimate
    for y, row in zip(positions, rows, strict=True):
        item = row.item
        if item.estimate is None:
            said = "not estimable here" if item.not_estimable else "no estimate"
            axes.text(0, y, said, va="center", ha="center", fontsize=8, color="#a31515")
            continue
        for n, kind in enumerate(kinds):
            low, high = row.bounds.get(kind, (None, None))
            if low is not None and high is not None and high > low:
                offset = y - step * (n + 1)
                axes.plot([low, high], [offset, offset], linewidth=1.2, **_style(kind, list(kinds))["line"])
        if _has_interval(item):
            assert item.estimate is not None  # _has_interval checked all three
            assert item.ci_low is not None
            assert item.ci_high is not None
            axes.errorbar(
                item.estimate,
                y,
                xerr=[[item.estimate - item.ci_low], [item.ci_high - item.estimate]],
                fmt="o",
                color=ESTIMATE_COLOUR,
                ecolor=ESTIMATE_COLOUR,
                capsize=3,
                markersize=5,
            )
        else:  # the reference: fixed at 0, no interval
            axes.plot([item.estimate], [y], marker="D", color=REFERENCE_COLOUR, markersize=5)
    axes.axvline(0.0, color=REFERENCE_COLOUR, linestyle=":", linewidth=1.2)
    axes.set_yticks(positions, labels=[_wrapped(row.label, narrow, "label") for row in rows])
    axes.set_ylim(-0.7, max(len(rows), 1) - 0.3)
    axes.set_xlabel(_wrapped(f"Log-ability relative to {reference}", narrow, "title"))
    axes.set_title(_wrapped(title, narrow, "title"), fontsize=10, loc="left")
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
