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
from analysis.models import PowerRun
from analysis.power.reported_test import INTERVAL, TARGET, Design, ReportedTestPower
from surveys.models import Study

from .power_runs import PowerFigures, PowerPlanRun, power_of_run, request_power_run

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
# Simulated studies of the reported test on the page (each runs the dashboard's test: about 10 ms), at the
# design and at each point of the levers (more vignettes, more judges, and the searches for the target).
PAGE_SIMULATIONS = 1000
LEVER_SIMULATIONS = 200


@dataclass(frozen=True)
class NamedTest:
    key: str
    name: str
    asks: str  # the question the test answers, in words
    power: float | None  # None while the reported test is still being simulated
    mc_se: float | None
    simulations: int | None
    repetitions_needed: int | None  # for the target power; None: more than 200, or no target


@dataclass(frozen=True)
class PowerPlan:
    tests: list[NamedTest]
    best_vs_worst: power.PowerResult
    run: PowerRun  # the reported test's simulation (a worker's)
    figures: PowerFigures | None  # None while it is simulating
    judged: power.JudgePowerResult | None
    target_power: float | None

    @property
    def reported(self) -> ReportedTestPower | None:
        return self.figures.reported if self.figures else None


def plan_power_page(design: dict, judge_plan: dict | None, *, study: Study) -> PowerPlan:
    """design: PowerForm.design(); judge_plan: PowerForm.judge_plan() (None without a judge). The reported test's
    power comes from a PowerRun: simulated by a worker the first time a design is asked, read after that."""
    target = design.get("target_power")
    best = power.power_analysis(**{k: v for k, v in design.items() if k not in REPORTED_ONLY})
    judged = power.judge_assisted_power(**judge_plan) if judge_plan else None
    run = request_power_run(study=study, plan=page_plan(design))
    figures = power_of_run(run)
    reported = figures.reported if figures else None
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
            f"averaged over the systems with a true effect.",
            reported.power if reported else None,
            reported.mc_se if reported else None,
            reported.simulations if reported else None,
            figures.levers.repetitions_needed if figures else None,
        ),
    ]
    return PowerPlan(tests, best, run, figures, judged, target)


def page_plan(design: dict) -> PowerPlanRun:
    """The reported test's simulation for the page's design: up to PAGE_SIMULATIONS studies at the design, a
    tenth of them (10 to LEVER_SIMULATIONS) at each point of the levers."""
    simulations = design["simulations"]
    return PowerPlanRun(
        planned_design(design),
        simulations=min(simulations, PAGE_SIMULATIONS),
        lever_simulations=max(10, min(LEVER_SIMULATIONS, simulations // 10)),
        seed=design["seed"] if design["seed"] is not None else 1,
        target=design.get("target_power") or TARGET,
    )


def planned_design(design: dict) -> Design:
    """The reported test's Design from PowerForm.design(): judges judge `vignettes_per_participant` pairs each."""
    return Design.of(pairs_per_judge=design["vignettes_per_participant"], **{key: design[key] for key in DESIGN_KEYS})
