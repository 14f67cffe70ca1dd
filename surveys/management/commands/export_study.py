import json

from django.core.management.base import BaseCommand, CommandError

from surveys.models import Study
from surveys.services.study_files import export_study


class Command(BaseCommand):
    help = "Print a study as a study file (JSON) on standard output."

    def add_arguments(self, parser):
        parser.add_argument("slug")

    def handle(self, *args, slug: str, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug '{slug}'.")
        self.stdout.write(json.dumps(export_study(study), indent=2, ensure_ascii=False))
