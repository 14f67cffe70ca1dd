from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from surveys.models import StudyMembership
from surveys.services.study_files import StudyFileError, check_file_size, import_study, read_study_upload
from surveys.services.teams import set_member


class Command(BaseCommand):
    help = "Import a study file (JSON); a draft study with the same slug is updated in place."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument(
            "--owner", metavar="USERNAME", help="A staff user who becomes the study's owner (docs/teams.md)."
        )

    def handle(self, *args, file: Path, owner: str | None = None, **options):
        owner_user = self._owner(owner)
        try:
            check_file_size(file.stat().st_size)  # before reading: STUDY_FILE_MAX_BYTES bounds the memory used
            study = import_study(read_study_upload(file.read_bytes()))
        except OSError as exc:
            raise CommandError(f"{file}: cannot read the file ({exc.strerror})") from exc
        except StudyFileError as exc:
            raise CommandError(f"{file}: nothing was imported.\n" + "\n".join(exc.errors)) from exc
        if owner_user is not None:
            set_member(study=study, user=owner_user, role=StudyMembership.Role.OWNER)
        self.stdout.write(
            f"Imported study '{study.slug}' ({study.status}): {study.vignettes.count()} vignettes, "
            f"{study.systems.count()} systems, {study.questions.count()} questions."
        )

    @staticmethod
    def _owner(username: str | None):
        """The --owner user, checked before anything is imported."""
        if username is None:
            return None
        user = get_user_model().objects.filter(username=username).first()
        if user is None or not user.is_staff:
            raise CommandError(f"--owner {username}: no staff user of that name; nothing was imported.")
        return user
