"""`manage.py power --systems K --vignettes V --repetitions R --gap G ...`: simulated design power."""

import json

from django.core.management.base import BaseCommand, CommandError

from analysis.power import SPACINGS, power_analysis


class Command(BaseCommand):
    help = "Simulated power to find the best and the worst system different (Wald test, Bradley-Terry)."

    def add_arguments(self, parser):
        parser.add_argument("--systems", type=int, required=True)
        parser.add_argument("--vignettes", type=int, required=True)
        parser.add_argument("--repetitions", type=int, required=True, help="judges per system pair x vignette")
        parser.add_argument("--gap", type=float, required=True, help="log-odds gap between best and worst")
        parser.add_argument("--spacing", choices=SPACINGS, default="even")
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument(
            "--questions",
            type=int,
            default=1,
            help="Bonferroni-correct alpha across this many questions (default 1: no correction; the method's "
            "85.6%% and the dashboard's power page divide alpha by the study's 5 questions)",
        )
        parser.add_argument("--simulations", type=int, default=1000)
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--vignettes-per-participant", type=int, default=5)
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        try:
            result = power_analysis(
                systems=options["systems"],
                vignettes=options["vignettes"],
                repetitions=options["repetitions"],
                gap=options["gap"],
                spacing=options["spacing"],
                alpha=options["alpha"],
                questions=options["questions"],
                simulations=options["simulations"],
                seed=options["seed"],
                vignettes_per_participant=options["vignettes_per_participant"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        needed = result.repetitions_needed_for(0.8)
        if options["json"]:
            self.stdout.write(json.dumps(result.as_dict() | {"repetitions_needed_for_0.8": needed}))
            return
        self.stdout.write(
            f"Power {result.power:.3f} (Monte Carlo SE {result.mc_se:.3f}, {result.simulations} simulations)\n"
            f"  {result.systems} systems, {result.vignettes} vignettes, {result.repetitions} repetitions: "
            f"{result.comparisons} judgments per question, {result.participants} judges\n"
            f"  best vs worst gap {result.gap} log-odds ({result.spacing} spacing), "
            f"alpha {result.alpha_per_test:.4g} per test\n"
            f"  repetitions needed for 80% power: {needed if needed is not None else 'more than 200'}"
        )
