"""The audit trail: one row per action that costs money, reaches participants or hands out their data."""

from ..models import AuditEvent, Study


def record_event(*, action: str, user=None, study: Study | None = None, **details) -> AuditEvent:
    """Write who did `action` to `study` (user None: a command or the system), with JSON-able details."""
    person = user if getattr(user, "pk", None) else None
    return AuditEvent.objects.create(
        action=action,
        user=person,
        username=person.get_username() if person else "",
        study=study,
        study_slug=study.slug if study else "",
        details=details,
    )
