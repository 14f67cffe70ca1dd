from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from surveys.services.study_files import StudyFileError, import_study, parse_study_file


class Command(BaseCommand):
    help = "Import a study file (JSON); a draft study with the same slug is updated in place."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, file: Path, **options):
        try:
            study = import_study(parse_study_file(file.read_text(encoding="utf-8")))
        except OSError as exc:
            raise CommandError(f"{file}: cannot read the file ({exc.strerror})") from exc
        except UnicodeDecodeError as exc:
            raise CommandError(f"{file}: not UTF-8 text (byte {exc.start} cannot be read)") from exc
        except StudyFileError as exc:
            raise CommandError(f"{file}: nothing was imported.\n" + "\n".join(exc.errors)) from exc
        self.stdout.write(
            f"Imported study '{study.slug}' ({study.status}): {study.vignettes.count()} vignettes, "
            f"{study.systems.count()} systems, {study.questions.count()} questions."
        )
