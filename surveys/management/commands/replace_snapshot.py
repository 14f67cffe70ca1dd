from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from surveys.models import Study
from surveys.services.snapshots import NothingToReplace, replace_snapshot


class Command(BaseCommand):
    help = (
        "After a data fix on a live study's rows (made inside surveys.models.freeze.freeze_lifted()), show the "
        "fixed content to participants: the study's snapshot is written again from its rows, every web process "
        "serves the new one from its next request, and the audit trail records it with what changed."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--reason", required=True, help="Why, for the audit trail (e.g. 'typo in vignette v3').")
        parser.add_argument("--by", help="The username the audit trail names (default: none, a command).")

    def handle(self, *args, slug: str, reason: str, by: str | None, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug '{slug}'.")
        user = None
        if by:
            user = get_user_model()._default_manager.filter(**{get_user_model().USERNAME_FIELD: by}).first()
            if user is None:
                raise CommandError(f"No user '{by}'.")
        try:
            snapshot = replace_snapshot(study=study, by=user, reason=reason)
        except NothingToReplace as exc:
            raise CommandError(str(exc)) from None
        event = study.audit_events.order_by("-at", "-id").first()
        changed = ", ".join(event.details["changed"]) if event else ""
        self.stdout.write(f"Study '{slug}' now shows snapshot {snapshot.pk} (changed: {changed or 'nothing'}).")
