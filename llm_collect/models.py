"""LLM collection: a CollectionRun asks systems for answers; each Generation is one system × vignette × sample.

``LLMCall`` is the row every paid LLM call works on, here and in llm_judging (its JudgeCall): its status, claim,
lease, attempts, history, the raw exchange and what it cost. The row is created once (a unique key per subclass)
and changes state only through the conditional UPDATEs of llm_collect/calls/states.py, so a redelivered task
never stores a second answer nor pays for a finished call twice. ``CallRun`` is what a run of such rows shares.
See docs/architecture.md for the whole path of a call.
"""

from django.conf import settings
from django.db import models
from django.db.models import Count, Q, Sum
from django.utils import timezone

from surveys.models import Answer, Study, System, Vignette


class LLMCall(models.Model):
    """One item asked of an LLM (an answer, a judgment): the calls that produce at most one result for it."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed (provider error)"
        INVALID = "invalid", "Invalid output (for the researcher)"

    class Outcome(models.TextChoices):
        """Why a paid reply gave no result, as the provider said it (empty: it did, or no reply yet)."""

        REFUSED = "refused", "Refused by the model"
        LENGTH = "length", "Cut by the length limit"
        BLOCKED = "blocked", "Blocked by a safety filter"
        MALFORMED = "malformed", "Malformed output"

    sample = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Provider calls made (paid for) so far.")
    claim = models.CharField(max_length=32, blank=True, help_text="Token of the worker currently holding the row.")
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    queued_at = models.DateTimeField(default=timezone.now)
    not_before = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When this pending row's next message is due at a worker (empty: it waits in the broker). "
        "Past due by a grace period, the message was lost and the sweep sends another.",
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    # The last call, as sent and as received (the key is never stored), and every attempt in history.
    raw_request = models.JSONField(default=dict, blank=True)
    raw_response = models.JSONField(default=dict, blank=True)
    raw_text = models.TextField(blank=True)
    error = models.TextField(blank=True, help_text="The last provider error or parse error.")
    parse_error = models.TextField(blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome.choices, blank=True)
    outcome_reason = models.TextField(blank=True, help_text="The provider's own words: refusal, stop or block reason.")
    history = models.JSONField(default=list, blank=True, help_text="Every attempt: outcome, error, tokens.")

    input_tokens = models.PositiveIntegerField(default=0, help_text="Summed over every attempt.")
    output_tokens = models.PositiveIntegerField(default=0, help_text="Summed over every attempt.")
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    model_version = models.CharField(max_length=200, blank=True)
    finish_reason = models.CharField(max_length=64, blank=True)
    cost_estimate = models.DecimalField(
        max_digits=12, decimal_places=6, default=0, help_text="USD, an estimate from a price table."
    )

    # Each subclass has its own `run` (a foreign key to its CallRun); the shared code reads only its id.
    run_id: int | None

    class Meta:
        abstract = True
        constraints = [models.CheckConstraint(condition=Q(sample__gte=1), name="%(class)s_sample_positive")]
        indexes = [
            # Progress in the admin: "rows of this run, counted by status".
            models.Index(fields=["run", "status"], name="%(class)s_run_status_idx"),
            # The sweep: "pending rows queued before a cutoff" and "running rows whose lease ran out".
            models.Index(fields=["status", "queued_at"], name="%(class)s_sweep_idx"),
            # The sweep: "pending rows whose message was due before a cutoff" (lost with a worker or the broker).
            models.Index(fields=["status", "not_before"], name="%(class)s_overdue_idx"),
        ]


FINAL = (LLMCall.Status.DONE, LLMCall.Status.FAILED, LLMCall.Status.INVALID)


class CallRun(models.Model):
    """One request to call LLMs for a study: who asked, how many samples, what it planned."""

    calls_name = ""  # the related name of the run's LLMCall rows

    samples = models.PositiveSmallIntegerField(default=5)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    planned = models.PositiveIntegerField(default=0, help_text="Calls this run queued.")
    already_present = models.PositiveIntegerField(default=0, help_text="Items done before this run (not asked again).")

    class Meta:
        abstract = True
        ordering = ["-created_at"]
        constraints = [models.CheckConstraint(condition=Q(samples__gte=1), name="%(class)s_samples_positive")]

    def counts(self) -> dict:
        """This run's rows by status and by outcome, plus tokens and the estimated cost."""
        rows = getattr(self, self.calls_name)
        counts: dict[str, int | float] = dict.fromkeys([*LLMCall.Status.values, *LLMCall.Outcome.values], 0)
        counts.update({row["status"]: row["n"] for row in rows.values("status").annotate(n=Count("id"))})
        outcomes = rows.exclude(outcome="").values("outcome").annotate(n=Count("id"))
        counts.update({row["outcome"]: row["n"] for row in outcomes})
        totals = rows.aggregate(i=Sum("input_tokens"), o=Sum("output_tokens"), c=Sum("cost_estimate"))
        counts.update(
            total=sum(counts[s] for s in LLMCall.Status.values),
            input_tokens=totals["i"] or 0,
            output_tokens=totals["o"] or 0,
            cost=float(totals["c"] or 0),
        )
        return counts


class CollectionRun(CallRun):
    """One request to collect answers: which study, which systems, how many samples, who asked."""

    calls_name = "generations"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="collection_runs")
    systems = models.ManyToManyField(System, related_name="collection_runs")

    class Meta(CallRun.Meta):
        pass

    def __str__(self) -> str:
        return f"{self.study.slug} run {self.pk} ({self.samples} samples)"


class GenerationQuerySet(models.QuerySet):
    def unfinished(self):
        return self.filter(status__in=[Generation.Status.PENDING, Generation.Status.RUNNING])

    def for_study(self, study):
        return self.filter(vignette__study=study)


class Generation(LLMCall):
    """One system × vignette × sample: the series of LLM calls that produce (at most) one Answer."""

    run = models.ForeignKey(CollectionRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="generations")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="generations")
    vignette = models.ForeignKey(Vignette, on_delete=models.CASCADE, related_name="generations")
    normalised = models.BooleanField(default=False, help_text="Weights were rescaled to sum to 100.")
    original_weights = models.JSONField(null=True, blank=True, help_text="The weights as the model gave them.")
    answer = models.OneToOneField(Answer, null=True, blank=True, on_delete=models.SET_NULL, related_name="generation")

    objects = GenerationQuerySet.as_manager()

    class Meta(LLMCall.Meta):
        ordering = ["system_id", "vignette_id", "sample"]
        constraints = [
            *LLMCall.Meta.constraints,
            models.UniqueConstraint(fields=["system", "vignette", "sample"], name="generation_once_per_sample"),
        ]

    def __str__(self) -> str:
        return f"{self.system.key} on {self.vignette.key} #{self.sample}"
