"""`manage.py refit SLUG`: refit a study now and store an AnalysisRun snapshot."""

from django.core.management.base import BaseCommand, CommandError

from analysis.models import AnalysisRun
from analysis.services import refit_study
from surveys.models import Study


class Command(BaseCommand):
    help = "Fit the Bradley-Terry model per question over a study's valid judgments and store the run."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the study's slug")
        parser.add_argument("--bootstrap", type=int, default=None, help="bootstrap replicates (default 1000)")
        parser.add_argument("--seed", type=int, default=None, help="seed of the bootstrap and split halves")
        parser.add_argument("--order-effect", action="store_true", help="adjust the estimates for position")

    def handle(self, *args, slug, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            known = ", ".join(Study.objects.order_by("slug").values_list("slug", flat=True)) or "none"
            raise CommandError(f"No study with slug '{slug}' (studies: {known}).")
        parameters = {"order_effect": options["order_effect"]}
        if options["bootstrap"] is not None:
            parameters["bootstrap"] = options["bootstrap"]
        if options["seed"] is not None:
            parameters["seed"] = options["seed"]
        run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=parameters)
        if run.status == AnalysisRun.Status.FAILED:
            raise CommandError(f"Run {run.pk} of '{slug}' failed: {run.error}")
        self.stdout.write(
            f"Run {run.pk} of '{slug}': {run.n_judgments} valid judgments from {run.n_participants} participants, "
            f"{len(run.results)} questions, data {run.data_hash[:12]}."
        )
        phases = getattr(run, "phase_seconds", {})
        if phases:
            self.stdout.write("Phases: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in phases.items()))
        for question in run.read_results().questions:
            if question.fit is None:
                self.stdout.write(f"  {question.question}: {'; '.join(question.problems)}")
                continue
            ranked = sorted(
                question.fit.items, key=lambda item: -(item.estimate if item.estimate is not None else -1e9)
            )
            summary = ", ".join(
                f"{item.item} {item.estimate:+.2f}" if item.estimate is not None else f"{item.item} -"
                for item in ranked
            )
            self.stdout.write(f"  {question.question}: {summary}")
