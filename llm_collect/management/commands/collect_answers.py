"""Start collecting LLM answers for a study: `manage.py collect_answers SLUG [--systems k1,k2] [--samples N]`."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from llm_collect.calls import BrokerUnavailable
from llm_collect.services import start_collection
from surveys.models import Study


class Command(BaseCommand):
    help = "Queue one collection task per LLM system × vignette × sample of a study."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--systems", default="", help="Comma-separated system keys (default: every LLM system).")
        parser.add_argument("--samples", type=int, default=5, help="Samples per system and vignette (default 5).")
        parser.add_argument("--retry-failed", action="store_true", help="Ask again where earlier runs failed.")

    def handle(self, *args, slug, systems, samples, retry_failed, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug '{slug}'.")
        keys = [key.strip() for key in systems.split(",") if key.strip()] or None
        try:
            run = start_collection(study=study, system_keys=keys, samples=samples, retry_failed=retry_failed)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        except BrokerUnavailable as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"Collection run {run.pk}: {run.planned} generations queued, {run.already_present} already answered."
        )
