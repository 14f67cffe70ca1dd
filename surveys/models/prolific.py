"""Prolific's webhook events as received, and the bonus payments made there."""

from django.conf import settings
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


class BonusPayment(models.Model):
    """One bulk bonus payment on Prolific: set up (Prolific answers its figures), then paid once.

    Prolific's pay endpoint is not idempotent (a second call pays again), so the row is claimed (SET_UP → PAYING)
    before it is called, and an unclear answer leaves it UNCERTAIN rather than payable again."""

    class Status(models.TextChoices):
        SET_UP = "set_up", "Set up, not paid"
        PAYING = "paying", "Being paid"
        PAID = "paid", "Paid"
        UNCERTAIN = "uncertain", "Unclear: check on Prolific"

    study = models.ForeignKey("surveys.Study", on_delete=models.PROTECT, related_name="bonus_payments")
    prolific_id = models.CharField(max_length=64, help_text="Prolific's bulk bonus payment id.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SET_UP)
    currency = models.CharField(max_length=3)
    # Pence or cents, as Prolific answered the set-up: to participants, its fee, the VAT on the fee.
    amount = models.PositiveIntegerField()
    fees = models.PositiveIntegerField()
    vat = models.PositiveIntegerField()
    reason = models.CharField(max_length=200, blank=True, help_text="Why the bonus is paid (kept for the record).")
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    paid_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    paid_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["prolific_id"],
                name="bonus_payment_once",
                violation_error_message="This bonus payment on Prolific is already recorded: it is paid only once.",
            )
        ]
        # The study's bonus list in the admin, newest first.
        indexes = [models.Index(fields=["study", "-created_at"], name="bonus_payment_by_study")]

    def __str__(self) -> str:
        return f"Bonus payment {self.prolific_id} ({self.get_status_display()})"

    @property
    def total(self) -> int:
        return self.amount + self.fees + self.vat


class Bonus(models.Model):
    """One participant's bonus within a bulk payment."""

    payment = models.ForeignKey(BonusPayment, on_delete=models.CASCADE, related_name="bonuses")
    participant = models.ForeignKey(
        "surveys.Participant", null=True, blank=True, on_delete=models.SET_NULL, related_name="bonuses"
    )
    prolific_pid = models.CharField(max_length=64)
    amount = models.PositiveIntegerField(help_text="Pence or cents.")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["payment", "prolific_pid"],
                name="bonus_once_per_payment",
                violation_error_message="A participant appears twice in this bonus payment: give each one amount.",
            ),
            models.CheckConstraint(
                condition=models.Q(amount__gt=0),
                name="bonus_amount_positive",
                violation_error_message="A bonus is an amount above zero.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prolific_pid}: {self.amount}"
