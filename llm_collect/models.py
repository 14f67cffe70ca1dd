"""LLM collection: a CollectionRun asks systems for answers; each Generation is one system × vignette × sample.

A Generation is created once (unique per system, vignette and sample) and moves through its states by
conditional UPDATEs (see services.py), so a redelivered task never stores a second answer nor pays for a
finished sample twice.
"""

from django.conf import settings
from django.db import models
from django.db.models import Count, Q, Sum
from django.utils import timezone

from surveys.models import Answer, Study, System, Vignette


class CollectionRun(models.Model):
    """One request to collect answers: which study, which systems, how many samples, who asked."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="collection_runs")
    systems = models.ManyToManyField(System, related_name="collection_runs")
    samples = models.PositiveSmallIntegerField(default=5)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    planned = models.PositiveIntegerField(default=0, help_text="Generations this run queued.")
    already_present = models.PositiveIntegerField(
        default=0, help_text="System × vignette × sample already answered before this run (not asked again)."
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.CheckConstraint(condition=Q(samples__gte=1), name="collectionrun_samples_positive")]

    def __str__(self) -> str:
        return f"{self.study.slug} run {self.pk} ({self.samples} samples)"

    def counts(self) -> dict[str, int]:
        """Generations of this run by status, plus tokens and the estimated cost."""
        rows = self.generations.values("status").annotate(n=Count("id"))
        counts = {status: 0 for status in Generation.Status.values}
        counts.update({row["status"]: row["n"] for row in rows})
        totals = self.generations.aggregate(
            input_tokens=Sum("input_tokens"), output_tokens=Sum("output_tokens"), cost=Sum("cost_estimate")
        )
        counts["total"] = sum(counts[s] for s in Generation.Status.values)
        counts["input_tokens"] = totals["input_tokens"] or 0
        counts["output_tokens"] = totals["output_tokens"] or 0
        counts["cost"] = float(totals["cost"] or 0)
        return counts


class GenerationQuerySet(models.QuerySet):
    def unfinished(self):
        return self.filter(status__in=[Generation.Status.PENDING, Generation.Status.RUNNING])

    def for_study(self, study):
        return self.filter(vignette__study=study)


class Generation(models.Model):
    """One system × vignette × sample: the series of LLM calls that produce (at most) one Answer."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed (provider error)"
        INVALID = "invalid", "Invalid output (for the researcher)"

    run = models.ForeignKey(CollectionRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="generations")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="generations")
    vignette = models.ForeignKey(Vignette, on_delete=models.CASCADE, related_name="generations")
    sample = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Provider calls made (paid for) so far.")
    claim = models.CharField(max_length=32, blank=True, help_text="Token of the worker currently holding the row.")
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    queued_at = models.DateTimeField(default=timezone.now)
    not_before = models.DateTimeField(
        null=True, blank=True, help_text="When the retry a worker holds for this pending row is due (empty: none)."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    # The last call, as sent and as received (the key is never stored).
    raw_request = models.JSONField(default=dict, blank=True)
    raw_response = models.JSONField(default=dict, blank=True)
    raw_text = models.TextField(blank=True)
    error = models.TextField(blank=True, help_text="The last provider error or parse error.")
    parse_error = models.TextField(blank=True)
    history = models.JSONField(default=list, blank=True, help_text="Every attempt: outcome, error, tokens.")
    normalised = models.BooleanField(default=False, help_text="Weights were rescaled to sum to 100.")
    original_weights = models.JSONField(null=True, blank=True, help_text="The weights as the model gave them.")

    input_tokens = models.PositiveIntegerField(default=0, help_text="Summed over every attempt.")
    output_tokens = models.PositiveIntegerField(default=0, help_text="Summed over every attempt.")
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    model_version = models.CharField(max_length=200, blank=True)
    finish_reason = models.CharField(max_length=64, blank=True)
    cost_estimate = models.DecimalField(
        max_digits=12, decimal_places=6, default=0, help_text="USD, an estimate from a price table."
    )
    answer = models.OneToOneField(Answer, null=True, blank=True, on_delete=models.SET_NULL, related_name="generation")

    objects = GenerationQuerySet.as_manager()

    class Meta:
        ordering = ["system_id", "vignette_id", "sample"]
        constraints = [
            models.UniqueConstraint(fields=["system", "vignette", "sample"], name="generation_once_per_sample"),
            models.CheckConstraint(condition=Q(sample__gte=1), name="generation_sample_positive"),
        ]
        indexes = [
            # Progress in the admin: "generations of this run, counted by status".
            models.Index(fields=["run", "status"], name="generation_run_status_idx"),
            # The sweep: "pending rows queued before a cutoff" and "running rows whose lease ran out".
            models.Index(fields=["status", "queued_at"], name="generation_sweep_idx"),
            # The sweep: "pending rows whose retry was due before a cutoff" (its worker died holding it).
            models.Index(fields=["status", "not_before"], name="generation_overdue_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.system.key} on {self.vignette.key} #{self.sample}"
