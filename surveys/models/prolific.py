"""Prolific's webhook events as received."""

from django.db import models
from django.utils import timezone


class ProlificEvent(models.Model):
    """One webhook event from Prolific, kept so that a repeated delivery is recognised and ignored."""

    event_id = models.CharField(
        max_length=128, help_text="Prolific's X-Event-ID header, or a digest of the event when it carries none."
    )
    event_type = models.CharField(max_length=64)
    resource_id = models.CharField(max_length=64, help_text="The submission (or study) the event is about.")
    status = models.CharField(max_length=24, blank=True)
    payload = models.JSONField(default=dict, blank=True)
    received_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True, help_text="When Prolific sent the event (X-Timestamp).")

    class Meta:
        ordering = ["-received_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["event_id"],
                name="prolific_event_once",
                violation_error_message="This Prolific event (event id) has already been received.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.event_type} {self.resource_id} → {self.status}"
