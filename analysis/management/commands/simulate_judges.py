from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from analysis.services.simulated_judges import ORDER_EFFECT, parse_abilities, simulate_judges
from surveys.models import Participant, Study


class Command(BaseCommand):
    help = "Demo only: simulated judges take a live study's survey, so the dashboard has data to show."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--judges", type=int, default=20)
        parser.add_argument(
            "--until-completed",
            type=int,
            metavar="N",
            help="Instead of --judges: only as many as it takes for N participants to have completed.",
        )
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument(
            "--ability",
            action="append",
            default=[],
            metavar="[QUESTION:]SYSTEM=LOGODDS",
            help="Assumed ability of a system against the others (default 0) on every question, e.g. "
            "--ability gpt-4o=0.4, or on one question, e.g. --ability features:claude-3.7-sonnet=-0.35",
        )
        parser.add_argument(
            "--order-effect",
            type=float,
            default=ORDER_EFFECT,
            metavar="LOGODDS",
            help=f"Log-odds pull towards the answer shown first (default {ORDER_EFFECT})",
        )
        parser.add_argument(
            "--answer-sd",
            type=float,
            default=0.0,
            metavar="SD",
            help="SD of each answer's quality beyond its system's ability, per question (default 0)",
        )
        parser.add_argument(
            "--inattentive",
            type=float,
            default=0.0,
            metavar="SHARE",
            help="Share of judges who pick at random yet pass the attention check (default 0)",
        )

    def handle(self, *args, slug: str, judges: int, until_completed, seed: int, ability: list[str], **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug '{slug}'.")
        if until_completed is not None:
            done = study.participants.filter(status=Participant.Status.COMPLETED).count()
            judges = max(0, until_completed - done)
        try:
            completed = simulate_judges(
                study=study,
                judges=judges,
                abilities=parse_abilities(ability),
                seed=seed,
                order_effect=options["order_effect"],
                answer_sd=options["answer_sd"],
                inattentive=options["inattentive"],
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(f"{completed} of {judges} simulated judges completed '{slug}'.")
