from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from surveys.models import Study
from surveys.services.answer_files import AnswerFileError, import_answers


class Command(BaseCommand):
    help = "Import answers into a draft study from a CSV file (docs/study-files.md, 'Answers from a CSV file')."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("file", type=Path)

    def handle(self, *args, slug: str, file: Path, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study '{slug}'.")
        try:
            done = import_answers(study=study, text=file.read_text(encoding="utf-8-sig"))
        except OSError as exc:
            raise CommandError(f"{file}: cannot read the file ({exc.strerror})") from exc
        except UnicodeDecodeError as exc:
            raise CommandError(f"{file}: not UTF-8 text (byte {exc.start} cannot be read)") from exc
        except AnswerFileError as exc:
            raise CommandError(f"{file}: nothing was imported.\n" + "\n".join(exc.errors)) from exc
        self.stdout.write(f"Study '{study.slug}': {done.created} answers added, {done.updated} updated.")
