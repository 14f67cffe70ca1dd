"""The power page's one story: each named test with its own power, then what an LLM judge changes.

Two tests answer different questions and have different power at the same design, so each figure is shown
with its test's name and what it asks (issue 19: a bare "Power 0.100" beside "Power of the reported tests
0.029" read as two answers to one question):
- best vs worst (the source study's figure): one two-sided Wald test of the best against the worst system;
- each system vs the reference (what the dashboard reports): Holm within a question; its power is the chance
  of declaring a system with a true effect different, averaged over those systems.
With a judge, the reported tests are recomputed beside it (analysis/power/judge.py); the humans-alone figure
is the same simulation as the table's (same design and seed).
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis import power

REPORTED_KEYS = ("systems", "vignettes", "repetitions", "gap", "spacing", "alpha", "questions", "simulations", "seed")


@dataclass(frozen=True)
class NamedTest:
    key: str
    name: str
    asks: str  # the question the test answers, in words
    power: float
    mc_se: float
    simulations: int
    repetitions_needed: int | None  # for the target power; None: more than 200, or no target


@dataclass(frozen=True)
class PowerPlan:
    tests: list[NamedTest]
    best_vs_worst: power.PowerResult
    reported: power.ReportedPowerResult
    judged: power.JudgePowerResult | None
    target_power: float | None


def plan_power_page(design: dict, judge_plan: dict | None) -> PowerPlan:
    """design: PowerForm.design(); judge_plan: PowerForm.judge_plan() (None without a judge)."""
    target = design.get("target_power")
    best = power.power_analysis(**{k: v for k, v in design.items() if k != "target_power"})
    judged = power.judge_assisted_power(**judge_plan) if judge_plan else None
    if judged is not None:
        reported, reported_needed = judged.without, judged.repetitions_needed_alone
    else:
        reported = power.reported_power(
            vignettes_per_participant=design["vignettes_per_participant"], **{k: design[k] for k in REPORTED_KEYS}
        )
        reported_needed = reported.repetitions_needed_for(target) if target else None
    alpha = f"alpha {best.alpha} ÷ {best.questions} question{'s' if best.questions != 1 else ''}"
    tests = [
        NamedTest(
            "best-vs-worst",
            "Best vs worst (the source study's figure)",
            f"Is the best system different from the worst? One two-sided Wald test at {alpha}.",
            best.power,
            best.mc_se,
            best.simulations,
            best.repetitions_needed_for(target) if target else None,
        ),
        NamedTest(
            "reported",
            "Each system vs the reference (what the dashboard reports)",
            f"Is each system different from the reference? One Wald test per system, Holm within a question at "
            f"{alpha}; the power is the chance of declaring a system with a true effect different, averaged over "
            f"those {len(reported.effects) - reported.effects.count(0.0)} systems.",
            reported.power,
            reported.mc_se,
            reported.simulations,
            reported_needed,
        ),
    ]
    return PowerPlan(tests, best, reported, judged, target)
