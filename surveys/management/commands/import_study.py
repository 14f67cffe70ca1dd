from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from surveys.services.study_files import StudyFileError, check_file_size, import_study, read_study_upload


class Command(BaseCommand):
    help = "Import a study file (JSON); a draft study with the same slug is updated in place."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)

    def handle(self, *args, file: Path, **options):
        try:
            check_file_size(file.stat().st_size)  # before reading: STUDY_FILE_MAX_BYTES bounds the memory used
            study = import_study(read_study_upload(file.read_bytes()))
        except OSError as exc:
            raise CommandError(f"{file}: cannot read the file ({exc.strerror})") from exc
        except StudyFileError as exc:
            raise CommandError(f"{file}: nothing was imported.\n" + "\n".join(exc.errors)) from exc
        self.stdout.write(
            f"Imported study '{study.slug}' ({study.status}): {study.vignettes.count()} vignettes, "
            f"{study.systems.count()} systems, {study.questions.count()} questions."
        )
