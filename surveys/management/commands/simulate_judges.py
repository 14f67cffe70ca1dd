from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from surveys.demo.simulate import simulate_judges
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
            metavar="SYSTEM=LOGODDS",
            help="Assumed ability of a system against the others (default 0), e.g. --ability gpt-4o=0.4",
        )

    def handle(self, *args, slug: str, judges: int, until_completed, seed: int, ability: list[str], **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug '{slug}'.")
        try:
            abilities = {key: float(value) for key, value in (item.split("=", 1) for item in ability)}
        except ValueError as exc:
            raise CommandError("--ability takes SYSTEM=NUMBER, e.g. gpt-4o=0.4") from exc
        if until_completed is not None:
            done = study.participants.filter(status=Participant.Status.COMPLETED).count()
            judges = max(0, until_completed - done)
        try:
            completed = simulate_judges(study=study, judges=judges, abilities=abilities, seed=seed)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(f"{completed} of {judges} simulated judges completed '{slug}'.")
