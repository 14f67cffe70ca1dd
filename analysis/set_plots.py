"""A question's results by vignette set as one figure: each system's ability per set (left) beside each system's
difference between sets with its interval (right), on the headline test of analysis/bradley_terry/sets.py."""

from __future__ import annotations

from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .plots import ESTIMATE_COLOUR, REFERENCE_COLOUR, _plain
from .results import BySet, SystemAtFit

SET_COLOURS = ["#8a94a6", "#2456a6", "#c2410c", "#15803d", "#7c3aed"]  # per set, in the study's order
ROW_INCHES = 0.5


def set_plot(*, systems: list[SystemAtFit], by_set: BySet, reference: str, title: str) -> Figure:
    """Left: every system's ability in each set with the set's interval. Right: each system's difference between
    each later set and the first with its interval; a system without a test says so."""
    keys = [s.key for s in systems]
    labels = [s.label for s in systems]
    pairs = list(dict.fromkeys(tuple(d.sets) for d in by_set.differences))
    figure = Figure(
        figsize=(10.5, ROW_INCHES * (len(keys) + 1) * max(1, len(pairs)) ** 0.5 + 2.2), layout="constrained"
    )
    left, right = figure.subplots(1, 2, sharey=True)
    step = 0.6 / max(1, len(by_set.sets))
    handles = []
    for s, one in enumerate(by_set.sets):
        colour = SET_COLOURS[s % len(SET_COLOURS)]
        for k, key in enumerate(keys):
            y = k + 0.3 - step * (s + 0.5)
            estimate, low, high = one.estimates[k], one.ci_low[k], one.ci_high[k]
            if key == reference:
                left.plot([0], [y], marker="D", color=REFERENCE_COLOUR, markersize=4)
            elif estimate is not None and low is not None and high is not None:
                left.errorbar(estimate, y, xerr=[[estimate - low], [high - estimate]], fmt="o", color=colour,
                              capsize=2, markersize=4)  # fmt: skip
            elif estimate is not None:
                left.plot([estimate], [y], marker="o", color=colour, markersize=4, fillstyle="none")
        handles.append(Line2D([], [], color=colour, marker="o", markersize=4, label=_plain(f"{one.set} (95% CI)")))
    for p, (first, later) in enumerate(pairs):
        colour = ESTIMATE_COLOUR if len(pairs) == 1 else SET_COLOURS[(p + 1) % len(SET_COLOURS)]
        for k, key in enumerate(keys):
            y = k - 0.15 * p
            found = [d for d in by_set.differences if d.system == key and tuple(d.sets) == (first, later)]
            if key == reference or not found:
                continue
            d = found[0]
            if d.estimate is not None and d.ci_low is not None and d.ci_high is not None:
                right.errorbar(d.estimate, y, xerr=[[d.estimate - d.ci_low], [d.ci_high - d.estimate]], fmt="s",
                               color=colour, capsize=3, markersize=5)  # fmt: skip
            else:
                right.text(0, y, "no test", va="center", ha="center", fontsize=8, color="#a31515")
        handles.append(
            Line2D([], [], color=colour, marker="s", markersize=5, label=_plain(f"{later} − {first} (95% CI)"))
        )
    for axes in (left, right):
        axes.axvline(0.0, color=REFERENCE_COLOUR, linestyle=":", linewidth=1.2)
        axes.grid(axis="x", color="#e4e7ec", linewidth=0.6)
    reference_label = labels[keys.index(reference)] if reference in keys else reference
    left.set_yticks(range(len(keys)), labels=[_plain(label) for label in labels])
    left.set_ylim(-0.7, len(keys) - 0.3)
    left.set_xlabel(_plain(f"Log-ability relative to {reference_label}, per set"))
    left.set_title(_plain(f"{title}: by set"), fontsize=10, loc="left")
    right.set_xlabel("Difference between sets (log-odds)")
    right.set_title("Difference between sets", fontsize=10, loc="left")
    figure.legend(handles=handles, loc="outside lower left", ncols=2, fontsize=8, frameon=False)
    return figure


def set_marks_in_words(by_set: BySet) -> str:
    """The figure's alt text: what each mark is."""
    sets = ", ".join(one.set for one in by_set.sets)
    return (
        f"Left: each system's ability in each set ({sets}), a dot and its 95% interval per set, the reference a "
        "black diamond at 0. Right: each system's difference between sets, a square and its 95% interval; "
        "a dotted line at 0 (no difference)."
    )
