"""The power page's one story: each named test with its own power, then what an LLM judge changes.

Two tests answer different questions and have different power at the same design, so each figure is shown
with its test's name and what it asks (issue 19: a bare "Power 0.100" beside "Power of the reported tests
0.029" read as two answers to one question):
- best vs worst (the source study's figure): one two-sided Wald test of the best against the worst system;
- each system vs the reference, the test the dashboard reports: its headline interval, Holm within a question,
  run on simulated studies with answer-level SD tau, judges and a position effect (analysis/power/reported_test.py);
  its power is the chance of declaring a system with a true effect different, averaged over those systems.
With a judge, PPI++ planning works on a Wald approximation of the reported tests (analysis/power/judge.py), and
the page says so beside its humans-alone figure.
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis import power
from analysis.power.reported_test import INTERVAL, Design, ReportedTestPower, reported_test_power

DESIGN_KEYS = (
    "systems",
    "vignettes",
    "repetitions",
    "gap",
    "spacing",
    "alpha",
    "questions",
    "answer_sd",
    "order_effect",
)
REPORTED_ONLY = ("target_power", "answer_sd", "order_effect")
# Simulated studies of the reported test on the page (each runs the dashboard's test: about 3 ms).
PAGE_SIMULATIONS = 500


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
    reported: ReportedTestPower
    judged: power.JudgePowerResult | None
    target_power: float | None


def plan_power_page(design: dict, judge_plan: dict | None) -> PowerPlan:
    """design: PowerForm.design(); judge_plan: PowerForm.judge_plan() (None without a judge)."""
    target = design.get("target_power")
    best = power.power_analysis(**{k: v for k, v in design.items() if k not in REPORTED_ONLY})
    judged = power.judge_assisted_power(**judge_plan) if judge_plan else None
    reported = reported_test_power(
        planned_design(design), simulations=min(design["simulations"], PAGE_SIMULATIONS), seed=design["seed"] or 1
    )
    reported_needed = None  # the levers (more vignettes, more judges) say what reaches the target
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
            "Each system vs the reference (the test the dashboard reports)",
            f"Is each system different from the reference? The dashboard's own test run on simulated studies: "
            f"{INTERVAL} at {alpha}; the power is the chance of declaring a system with a true effect different, "
            f"averaged over those {sum(1 for effect in reported.design.abilities[1:] if effect)} systems.",
            reported.power,
            reported.mc_se,
            reported.simulations,
            reported_needed,
        ),
    ]
    return PowerPlan(tests, best, reported, judged, target)


def planned_design(design: dict) -> Design:
    """The reported test's Design from PowerForm.design(): judges judge `vignettes_per_participant` pairs each."""
    return Design.of(pairs_per_judge=design["vignettes_per_participant"], **{key: design[key] for key in DESIGN_KEYS})
