"""What would raise the reported test's power: more vignettes, or more judges (judgments per pair x vignette).

With answers that vary beyond their system's ability (tau > 0) the headline interval generalises over
vignettes, so its precision is bounded by the number of vignettes: past a point more judges add nothing, and
only more vignettes reach the target. `plan_levers` simulates both levers around a design and says which one
can reach the target, in words ("more judges cannot reach 80%: needs at least 30 vignettes").

Every point uses the same seed (common random numbers), so that simulation noise does not break the order in
which power rises along a lever, and the searches bisect on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .design import bisect
from .reported_test import MAX_REPETITIONS, MAX_VIGNETTES, TARGET, Design, ReportedTestPower, simulate

VIGNETTE_FACTORS = (0.5, 1, 2, 4)
JUDGE_FACTORS = (0.5, 1, 2, 4, 8)
MIN_VIGNETTES = 3  # below this the dashboard shows no test


@dataclass(frozen=True)
class LeverPoint:
    vignettes: int
    repetitions: int
    judges: int
    judgments: int
    power: float
    mc_se: float
    planned: bool

    @classmethod
    def of(cls, result: ReportedTestPower, planned: Design) -> LeverPoint:
        design = result.design
        return cls(
            design.vignettes,
            design.repetitions,
            design.judges,
            design.judgments,
            result.power,
            result.mc_se,
            (design.vignettes, design.repetitions) == (planned.vignettes, planned.repetitions),
        )


@dataclass(frozen=True)
class Levers:
    """Power along both levers and how many vignettes or judgments per cell reach the target."""

    target: float
    more_vignettes: list[LeverPoint]  # the design's judgments per cell, more vignettes
    more_judges: list[LeverPoint]  # the design's vignettes, more judgments per cell
    vignettes_needed: int | None  # at the design's judgments per cell; None: more than MAX_VIGNETTES
    repetitions_needed: int | None  # at the design's vignettes; None: more than MAX_REPETITIONS
    judges_needed: int | None  # the judges those repetitions take
    advice: str  # what to change, in words
    why_no_repetitions: str  # why repetitions_needed is None ("" when it is not)
    why_no_vignettes: str

    def as_dict(self) -> dict:
        return {
            "target": self.target,
            "more_vignettes": [point.__dict__ for point in self.more_vignettes],
            "more_judges": [point.__dict__ for point in self.more_judges],
            f"vignettes_needed_for_{self.target:g}": self.vignettes_needed,
            f"repetitions_needed_for_{self.target:g}": self.repetitions_needed,
            "judges_needed": self.judges_needed,
            "advice": self.advice,
            "why_no_repetitions": self.why_no_repetitions,
            "why_no_vignettes": self.why_no_vignettes,
        }


def lever_values(planned: int, factors, *, smallest: int, largest: int) -> list[int]:
    values = {min(max(math.ceil(planned * factor), smallest), largest) for factor in factors}
    return sorted(values | {planned})


def plan_levers(
    design: Design, *, simulations: int, seed: int, target: float = TARGET, run=simulate, planned=None
) -> Levers:
    """Both levers around `design` and the searches for `target`; `run(design, simulations=, seed=)`
    simulates one design (a resumable task passes one that saves as it goes); `planned`, the design's own
    result when it is already simulated."""
    cache: dict[tuple[int, int], ReportedTestPower] = {}
    if planned is not None:
        cache[(design.vignettes, design.repetitions)] = planned

    def power_at(vignettes: int, repetitions: int) -> ReportedTestPower:
        key = (vignettes, repetitions)
        if key not in cache:
            cache[key] = run(
                replace(design, vignettes=vignettes, repetitions=repetitions), simulations=simulations, seed=seed
            )
        return cache[key]

    vignette_points = [
        LeverPoint.of(power_at(v, design.repetitions), design)
        for v in lever_values(design.vignettes, VIGNETTE_FACTORS, smallest=MIN_VIGNETTES, largest=MAX_VIGNETTES)
    ]
    judge_points = [
        LeverPoint.of(power_at(design.vignettes, r), design)
        for r in lever_values(design.repetitions, JUDGE_FACTORS, smallest=1, largest=MAX_REPETITIONS)
    ]
    if math.isnan(power_at(design.vignettes, design.repetitions).power):
        why = "no system has a true effect in this design, so there is no power to reach"
        return Levers(target, vignette_points, judge_points, None, None, None, why, why, why)
    reaches_with_vignettes = _smallest(
        lambda v: power_at(v, design.repetitions).power >= target, MIN_VIGNETTES, MAX_VIGNETTES
    )
    reaches_with_judges = _smallest(lambda r: power_at(design.vignettes, r).power >= target, 1, MAX_REPETITIONS)
    return _in_words(
        design, target, vignette_points, judge_points, reaches_with_vignettes, reaches_with_judges, power_at
    )


def _in_words(design, target, vignette_points, judge_points, vignettes_needed, repetitions_needed, power_at) -> Levers:
    percent = f"{target:.0%}"
    judges_needed = replace(design, repetitions=repetitions_needed).judges if repetitions_needed else None
    why_no_vignettes = (
        ""
        if vignettes_needed
        else (
            f"even {MAX_VIGNETTES} vignettes at {design.repetitions} judgments per system pair × vignette stay below "
            f"{percent} (power {power_at(MAX_VIGNETTES, design.repetitions).power:.2f})"
        )
    )
    if design.vignettes < MIN_VIGNETTES:
        why_no_repetitions = (
            f"with {design.vignettes} vignette{'s' if design.vignettes != 1 else ''} the dashboard shows no test at "
            f"all (it needs at least {MIN_VIGNETTES}), whatever the number of judges"
        )
    elif repetitions_needed is None:
        most = power_at(design.vignettes, MAX_REPETITIONS)
        why_no_repetitions = (
            f"more judges cannot reach {percent} at {design.vignettes} vignettes: even {MAX_REPETITIONS} judgments "
            f"per system pair × vignette ({most.design.judges:,} judges) give power {most.power:.2f}, because the "
            "answers' own variation (tau) is averaged over vignettes, not judges"
        )
    else:
        why_no_repetitions = ""
    vignettes_phrase = (
        f"at least {vignettes_needed} vignettes ({replace(design, vignettes=vignettes_needed).judges:,} judges "
        f"at {design.repetitions} judgments per system pair × vignette)"
        if vignettes_needed
        else f"more than {MAX_VIGNETTES} vignettes"
    )
    needs = f"needs {vignettes_phrase}"
    if power_at(design.vignettes, design.repetitions).power >= target:
        advice = f"This design reaches {percent}."
    elif why_no_repetitions:
        advice = f"{why_no_repetitions[0].upper()}{why_no_repetitions[1:]}: add vignettes; {percent} {needs}."
    else:
        advice = (
            f"{percent} takes {repetitions_needed} judgments per system pair × vignette ({judges_needed:,} judges) at "
            f"{design.vignettes} vignettes, or keeping {design.repetitions} judgments per cell, {vignettes_phrase}."
        )
    return Levers(
        target,
        vignette_points,
        judge_points,
        vignettes_needed,
        repetitions_needed,
        judges_needed,
        advice,
        why_no_repetitions,
        why_no_vignettes,
    )


def _smallest(reaches, low: int, high: int) -> int | None:
    """Smallest value in [low, high] for which `reaches` holds (power rises along a lever), or None:
    doubling from `low`, then bisection."""
    if reaches(low):
        return low
    below, above = low, low
    while True:
        above = min(above * 2, high)
        if reaches(above):
            break
        if above == high:
            return None
        below = above
    return bisect(reaches, below, above)


def power_json(result: ReportedTestPower, levers: Levers | None) -> dict:
    """`manage.py power --json` and the API: the reported test's power, the interval it simulated, its df, both
    levers, and vignettes_needed_for_0.8 / repetitions_needed_for_0.8 each with its reason when None."""
    body = result.as_dict()
    if levers is None:
        return body
    lever = levers.as_dict()
    needed = {key: value for key, value in lever.items() if key.endswith(f"_needed_for_{levers.target:g}")}
    reasons = {"why_no_repetitions": levers.why_no_repetitions, "why_no_vignettes": levers.why_no_vignettes}
    return body | {"levers": lever, "advice": levers.advice} | needed | reasons
