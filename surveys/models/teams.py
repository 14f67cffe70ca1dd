"""Who may see and act on a study (its team), and the audit trail of what was done to it.

The rules (who sees what, who may act) are in surveys/services/teams.py; docs/teams.md explains them.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone

from .study import Study


class StudyMembership(models.Model):
    """One staff user on one study's team, with a role: viewers only look, researchers and owners act."""

    class Role(models.TextChoices):
        OWNER = "owner", "Owner (acts, and changes the team)"
        RESEARCHER = "researcher", "Researcher (acts: go live, runs, Prolific, exports)"
        VIEWER = "viewer", "Viewer (sees the study and its results only)"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="study_memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.RESEARCHER)
    added_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["study", "user"],
                name="study_membership_once",
                violation_error_message="This user is already on the study's team.",
            )
        ]
        # studies_for(user): the user's memberships, looked up by user.
        indexes = [models.Index(fields=["user", "study"], name="study_membership_by_user")]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) on {self.study_id}"


class AuditEvent(models.Model):
    """Something that costs money, reaches participants or hands out their data: who did it, and when."""

    class Action(models.TextChoices):
        WENT_LIVE = "went_live", "Went live"
        CLOSED = "closed", "Closed"
        SNAPSHOT_REPLACED = "snapshot_replaced", "Snapshot replaced (a data fix on a live study)"
        PROLIFIC_PUBLISHED = "prolific_published", "Published on Prolific"
        PROLIFIC_DRAFT_CREATED = "prolific_draft_created", "Prolific draft created"
        PROLIFIC_LINKED = "prolific_linked", "Prolific study linked or unlinked"
        PARTICIPANT_EXCLUDED = "participant_excluded", "Participants excluded by the researcher"
        WRITERS_ASKED_TO_RETURN = "writers_asked_to_return", "Answer writers asked to return (unpaid)"
        PROLIFIC_PLACES_ADDED = "prolific_places_added", "Places added on Prolific (paid)"
        PROLIFIC_REVIEWED = "prolific_reviewed", "Submissions reviewed on Prolific (approved, rejected, returns)"
        PROLIFIC_BONUSES_PAID = "prolific_bonuses_paid", "Bonuses paid on Prolific"
        COLLECTION_STARTED = "collection_started", "LLM collection started (paid)"
        COLLECTION_RETRIED = "collection_retried", "LLM calls asked again (paid)"
        JUDGING_STARTED = "judging_started", "LLM judging started (paid)"
        DATA_EXPORTED = "data_exported", "Participant data exported"
        TEAM_CHANGED = "team_changed", "Team changed"

    at = models.DateTimeField(default=timezone.now)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept when the user is deleted: the trail still says who it was.
    username = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=32, choices=Action.choices)
    study = models.ForeignKey(Study, null=True, blank=True, on_delete=models.SET_NULL, related_name="audit_events")
    study_slug = models.CharField(max_length=64, blank=True)
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        # The admin's list, filtered by study, newest first.
        indexes = [models.Index(fields=["study", "-at"], name="audit_event_by_study")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.username or 'system'}: {self.get_action_display()} {self.study_slug}"
