"""The answer-writing survey: expert invitations, respondents and the vignettes they write about."""

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from .answers import Answer
from .study import Study
from .study_parts import System, Vignette


def new_invitation_token() -> str:
    """An unguessable token for an expert's invitation link (32 url-safe characters)."""
    return secrets.token_urlsafe(24)


class Invitation(models.Model):
    """A one-person link for an expert who is not on Prolific: /r/<slug>/invite/<token>/.

    One invitation admits one respondent (a unique constraint on Respondent.invitation); opening it
    again resumes that respondent's answers, in the browser that opened it first only (a signed
    cookie holding `browser_key`). It can be revoked, and expires (settings.INVITATION_MAX_AGE_DAYS);
    surveys/services/invitations.py has the rules.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="invitations")
    system = models.ForeignKey(
        System,
        on_delete=models.CASCADE,
        related_name="invitations",
        limit_choices_to={"kind": "expert"},
        help_text="The expert system whose answers this person writes.",
    )
    token = models.CharField(max_length=64, default=new_invitation_token, editable=False)
    label = models.CharField(max_length=200, blank=True, help_text="Whom it is for: a name or an email note.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    used_at = models.DateTimeField(null=True, blank=True, help_text="When the link was first opened.")
    browser_key = models.CharField(
        max_length=64, blank=True, editable=False, help_text="Held, signed, in a cookie of the browser it is bound to."
    )
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["study_id", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["token"],
                name="invitation_token_unique",
                violation_error_message="Another invitation already has this token.",
            )
        ]

    def __str__(self) -> str:
        return self.label or f"invitation {self.pk}"


class Respondent(models.Model):
    """A lay person (from Prolific) or an invited expert who writes answers as a human or expert System."""

    class Status(models.TextChoices):
        STARTED = "started", "Started"
        CONSENTED = "consented", "Consented"
        NO_CONSENT = "no-consent", "Did not consent"
        WRITING = "writing", "Writing"
        COMPLETED = "completed", "Completed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="respondents")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="respondents")
    prolific_pid = models.CharField(max_length=64, blank=True, help_text="Blank for invited experts.")
    prolific_study_id = models.CharField(max_length=64, blank=True)
    session_id = models.CharField(max_length=64, blank=True, help_text="Prolific's submission id.")
    invitation = models.ForeignKey(
        Invitation, null=True, blank=True, on_delete=models.RESTRICT, related_name="respondents"
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.STARTED)
    consented_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    return_requested_at = models.DateTimeField(
        null=True, blank=True, help_text="When Prolific was asked to have this writer return the submission."
    )
    return_request = models.TextField(blank=True, help_text="The reasons sent with the return request, and by whom.")

    class Meta:
        ordering = ["study_id", "-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "prolific_pid"],
                condition=~Q(prolific_pid=""),
                name="respondent_once_per_study",
                violation_error_message="This Prolific participant (PROLIFIC_PID) already writes answers in this study.",
            ),
            models.UniqueConstraint(
                fields=["invitation"],
                condition=Q(invitation__isnull=False),
                name="respondent_once_per_invitation",
                violation_error_message="This invitation already has its respondent: an invitation admits one person.",
            ),
            models.CheckConstraint(
                condition=~Q(prolific_pid="") | Q(invitation__isnull=False),
                name="respondent_has_pid_or_invitation",
                violation_error_message="A respondent needs a Prolific participant id (PROLIFIC_PID) or an invitation.",
            ),
        ]
        indexes = [
            # Admin and progress: "respondents of this study by status".
            models.Index(fields=["study", "status"], name="respondent_status_idx"),
        ]

    def __str__(self) -> str:
        return self.prolific_pid or str(self.invitation or f"respondent {self.pk}")


class RespondentTask(models.Model):
    """One vignette a respondent is to answer, at a fixed position; `answer` is what they wrote."""

    respondent = models.ForeignKey(Respondent, on_delete=models.CASCADE, related_name="tasks")
    vignette = models.ForeignKey(Vignette, on_delete=models.CASCADE, related_name="respondent_tasks")
    position = models.PositiveSmallIntegerField(help_text="1 for the first writing page, 2 for the second, …")
    answer = models.ForeignKey(Answer, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    assigned_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["respondent_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["respondent", "vignette"],
                name="respondent_task_vignette_once",
                violation_error_message="This respondent already has this vignette to write about.",
            ),
            models.UniqueConstraint(
                fields=["respondent", "position"],
                name="respondent_task_position_unique",
                violation_error_message="This respondent already has a vignette at this position.",
            ),
            models.UniqueConstraint(
                fields=["answer"],
                condition=Q(answer__isnull=False),
                name="respondent_task_answer_once",
                violation_error_message="This answer already belongs to another respondent's task.",
            ),
        ]
        indexes = [
            # Spreading vignettes: "open (unsubmitted) tasks per vignette, recently assigned".
            models.Index(fields=["vignette", "submitted_at", "assigned_at"], name="respondent_task_open_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.respondent} page {self.position} ({self.vignette.key})"
