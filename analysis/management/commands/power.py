"""`manage.py power [--test reported|best-vs-worst] [--questions N] [--answer-sd T] ... [--json]`.

`--test reported` (the default) runs the dashboard's own test on simulated studies (analysis/power/
reported_test.py): the headline interval per system against the reference, Holm within a question, with
answer-level SD tau, judges `--pairs-per-judge` pairs each and a position effect; then both levers (more
vignettes, more judges) and what reaches 80% (analysis/power/levers.py). `--interval wald|answer-robust` are
fast approximations that are NOT the dashboard's test (the PPI judge planning uses the Wald one).

`--judge-agreement A [--human-agreement H] [--llm-cells N]` (reported test) adds the power and the human
judgments needed when the humans are combined with an LLM judge by PPI++ (analysis/power/judge.py).

Defaults are the source study's first experiment (7 systems, 12 vignettes, 8 judgments per
cell, a 0.4 log-odds gap), so `power --test best-vs-worst --questions 5` reproduces its 85.6%.
"""

import argparse
import json

from django.core.management.base import BaseCommand, CommandError

from analysis.power import (
    INTERVALS,
    SPACINGS,
    TESTS,
    PowerResult,
    ReportedPowerResult,
    judge_assisted_power,
    power_analysis,
    reported_power,
)
from analysis.power.judge import DEFAULT_HUMAN_AGREEMENT
from analysis.power.levers import plan_levers, power_json
from analysis.power.reported_test import INTERVAL, Design, ReportedTestPower, reported_test_power

HEADLINE = "headline"
DEFAULT_SIMULATIONS = {"reported": 1000, "best-vs-worst": 10_000}
TEST_NAMES = {
    "reported": "each system vs the reference (the reported tests)",
    "best-vs-worst": "best vs worst (the source study's figure)",
}


class Command(BaseCommand):
    help = (
        "Simulated power of a judging design: for the test the dashboard reports (its headline interval, each "
        "system vs the reference, Holm within a question, run on simulated studies), or the source study's "
        "best-vs-worst figure."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--test",
            choices=TESTS,
            default="reported",
            help="reported: each system vs the reference, Holm within a question (default); "
            "best-vs-worst: the source study's figure",
        )
        parser.add_argument("--systems", type=int, default=7)
        parser.add_argument("--vignettes", type=int, default=12)
        parser.add_argument("--repetitions", type=int, default=8, help="judges per system pair x vignette")
        parser.add_argument("--gap", type=float, default=0.4, help="log-odds from the reference (worst) to the best")
        parser.add_argument("--spacing", choices=SPACINGS, default="even")
        parser.add_argument(
            "--abilities",
            type=_numbers,
            default=None,
            metavar="A,B,...",
            help="reported test: true abilities, the reference first (overrides --systems, --gap, --spacing)",
        )
        parser.add_argument(
            "--answer-sd", type=float, default=0.0, help="reported test: SD of answer quality beyond ability (tau)"
        )
        parser.add_argument(
            "--interval",
            choices=(HEADLINE, *INTERVALS),
            default=HEADLINE,
            help="reported test: headline (default: the dashboard's own test, run on simulated studies); wald and "
            "answer-robust are fast approximations that are not what the dashboard reports",
        )
        parser.add_argument("--pairs-per-judge", type=int, default=5, help="reported test: pairs each judge judges")
        parser.add_argument(
            "--order-effect", type=float, default=0.0, help="reported test: log-odds for the answer shown first"
        )
        parser.add_argument(
            "--lever-simulations",
            type=int,
            default=100,
            help="reported test: simulations per point of the levers (more vignettes, more judges); 0 skips them",
        )
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument(
            "--questions",
            type=int,
            default=1,
            help="Bonferroni-correct alpha across this many questions (default 1: no correction; the method's "
            "85.6%% and the dashboard's power page divide alpha by the study's 5 questions)",
        )
        parser.add_argument(
            "--simulations", type=int, default=None, help="default 1,000 (reported) or 10,000 (best-vs-worst)"
        )
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--vignettes-per-participant", type=int, default=5)
        parser.add_argument(
            "--judge-agreement",
            type=float,
            default=None,
            help="reported test: an LLM judge's agreement with the human majority; adds power with the judge (PPI++)",
        )
        parser.add_argument(
            "--human-agreement",
            type=float,
            default=DEFAULT_HUMAN_AGREEMENT,
            help=f"with --judge-agreement: humans' agreement with their cell's majority (default {DEFAULT_HUMAN_AGREEMENT})",
        )
        parser.add_argument(
            "--llm-cells",
            type=int,
            default=None,
            help="with --judge-agreement: cells the judge judges, the humans' included (default: the design's, which "
            "saves nothing: only cells beyond the humans' help)",
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        if options["simulations"] is None:
            options["simulations"] = DEFAULT_SIMULATIONS[options["test"]]
        if options["test"] == "reported" and options["interval"] == HEADLINE and options["judge_agreement"] is None:
            return self.headline(options)
        if options["interval"] == HEADLINE:
            options["interval"] = "wald"  # best-vs-worst, and the PPI judge planning, are Wald tests
        design = {
            key: options[key]
            for key in ("vignettes", "repetitions", "gap", "spacing", "alpha", "questions", "simulations", "seed")
        } | {"vignettes_per_participant": options["vignettes_per_participant"]}
        reported_only = [
            flag
            for flag, given in (
                ("--abilities", options["abilities"] is not None),
                ("--answer-sd", options["answer_sd"] != 0.0),
                ("--interval", options["interval"] not in (HEADLINE, "wald")),
                ("--judge-agreement", options["judge_agreement"] is not None),
            )
            if given
        ]
        if options["test"] == "best-vs-worst" and reported_only:
            raise CommandError(f"{', '.join(reported_only)} apply to --test reported only.")
        result: PowerResult | ReportedPowerResult
        try:
            if options["test"] == "best-vs-worst":
                result = power_analysis(systems=options["systems"], **design)
            else:
                result = reported_power(**_reported_design(options), **design)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["judge_agreement"] is not None:
            return self.with_judge(options, design)
        needed = result.repetitions_needed_for(0.8)
        if options["json"]:
            self.stdout.write(
                json.dumps(result.as_dict() | {"test": options["test"], "repetitions_needed_for_0.8": needed})
            )
            return
        lines = [
            f"Power of {TEST_NAMES[options['test']]}: {result.power:.3f} "
            f"(Monte Carlo SE {result.mc_se:.3f}, {result.simulations} simulations)",
            f"  {result.systems} systems, {result.vignettes} vignettes, {result.repetitions} repetitions: "
            f"{result.comparisons} judgments per question, {result.participants} judges",
        ]
        if isinstance(result, PowerResult):  # --test best-vs-worst
            lines.append(
                f"  best vs worst gap {result.gap} log-odds ({result.spacing} spacing), "
                f"alpha {result.alpha_per_test:.4g} per test"
            )
        else:
            lines += _reported_lines(result)
        lines.append(f"  repetitions needed for 80% power: {needed if needed is not None else 'more than 200'}")
        self.stdout.write("\n".join(lines))

    def headline(self, options) -> None:
        """The dashboard's own test on simulated studies, then both levers and what reaches 80%."""
        try:
            design = Design.of(
                systems=options["systems"],
                gap=options["gap"],
                spacing=options["spacing"],
                abilities=options["abilities"],
                vignettes=options["vignettes"],
                repetitions=options["repetitions"],
                pairs_per_judge=options["pairs_per_judge"],
                answer_sd=options["answer_sd"],
                order_effect=options["order_effect"],
                alpha=options["alpha"],
                questions=options["questions"],
            )
            seed = options["seed"] if options["seed"] is not None else 1
            result = reported_test_power(design, simulations=options["simulations"], seed=seed)
            levers = None
            if options["lever_simulations"] > 0:
                levers = plan_levers(design, simulations=options["lever_simulations"], seed=seed)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(power_json(result, levers)))
            return
        self.stdout.write("\n".join(_headline_lines(result, levers)))

    def with_judge(self, options, design) -> None:
        try:
            judged = judge_assisted_power(
                **_reported_design(options),
                judge_agreement=options["judge_agreement"],
                human_agreement=options["human_agreement"],
                llm_cells=options["llm_cells"],
                target_power=0.8,
                **design,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["json"]:
            self.stdout.write(json.dumps(judged.as_dict() | {"test": "reported"}))
            return
        alone = judged.without
        lines = [
            f"Power of {TEST_NAMES['reported']}, Wald approximation (not the dashboard's headline test): "
            f"{alone.power:.3f} humans alone, "
            f"{judged.with_judge_power:.3f} with the LLM judge "
            f"(Monte Carlo SE {alone.mc_se:.3f}, {alone.simulations} simulations)",
            f"  {alone.systems} systems, {alone.vignettes} vignettes, {alone.repetitions} repetitions: "
            f"{alone.comparisons} human judgments per question, {alone.participants} judges",
            *_reported_lines(alone)[:1],
            f"  judge: agreement {judged.judge_agreement} with the human majority, humans' own {judged.human_agreement}: "
            f"rho {judged.rho:.3f} per pick, {judged.rho_cell:.3f} against a cell's {alone.repetitions} humans",
            f"  the judge judges {judged.llm_cells} cells, {judged.extra_cells} beyond the humans' {judged.human_cells} "
            "(PPI++, cell-clustered variance)",
            f"  the {judged.human_judgments} human judgments are worth {judged.worth_human_judgments:.0f} beside the judge",
            "  for 80% power: " + _needed(judged),
        ]
        if judged.why_no_saving:
            lines.append(f"  no saving: {judged.why_no_saving}.")
        self.stdout.write("\n".join(lines))


def _reported_design(options) -> dict:
    return {key: options[key] for key in ("systems", "abilities", "answer_sd", "interval")}


def _needed(judged) -> str:
    if judged.judgments_needed_alone is None:
        return "more than 200 repetitions per cell by humans alone"
    return (
        f"{judged.judgments_needed_alone} human judgments per question ({judged.participants_needed_alone} judges) "
        f"alone, {judged.judgments_needed_with_judge} ({judged.participants_needed_with_judge} judges) with the judge"
    )


def _reported_lines(result) -> list[str]:
    lines = [
        f"  each system vs the reference, {result.interval} test, Holm within a question at alpha "
        f"{result.alpha_per_question:.4g}; answer-level SD {result.answer_sd}",
        "  power is the mean over the systems with a true effect; per system (effect: power):",
    ]
    lines += [
        f"    system {k}: {effect:+.3f}: {power:.3f}"
        for k, (effect, power) in enumerate(zip(result.effects, result.per_system, strict=True), start=1)
    ]
    if result.false_positive_rate is not None:
        lines.append(f"  a system without a true effect declared different: {result.false_positive_rate:.3f}")
    return lines


def _numbers(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",")]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"numbers separated by commas were expected, not {text!r}") from exc


def _headline_lines(result: ReportedTestPower, levers) -> list[str]:
    design = result.design
    lines = [
        f"Power of {TEST_NAMES['reported']}: {result.power:.3f} "
        f"(Monte Carlo SE {result.mc_se:.3f}, {result.simulations} simulated studies)",
        f"  the test: {INTERVAL}, at alpha {design.alpha / design.questions:.4g}"
        + (f" (t with {result.df:.1f} df on average)" if result.df is not None else ""),
        f"  {design.systems} systems, {design.vignettes} vignettes, {design.repetitions} judgments per system pair × "
        f"vignette: {design.judgments} judgments per question, {design.judges} judges at {design.pairs_per_judge} "
        f"pairs each; answer-level SD {design.answer_sd}, order effect {design.order_effect}",
        "  power is the mean over the systems with a true effect; per system (effect: power):",
    ]
    lines += [
        f"    system {k}: {effect:+.3f}: {power:.3f}"
        for k, (effect, power) in enumerate(zip(design.abilities[1:], result.per_system, strict=True), start=1)
    ]
    if result.false_positive_rate is not None:
        lines.append(f"  a system without a true effect declared different: {result.false_positive_rate:.3f}")
    if result.untested:
        lines.append(f"  studies where the dashboard shows no test: {result.untested:.3f}")
    if levers is not None:
        lines.append("  more vignettes (same judgments per cell): " + _points(levers.more_vignettes, "vignettes"))
        lines.append("  more judges (same vignettes): " + _points(levers.more_judges, "judges"))
        lines.append(f"  {levers.advice}")
    return lines


def _points(points, what: str) -> str:
    return ", ".join(f"{getattr(point, what):,} {what} {point.power:.2f}" for point in points)
