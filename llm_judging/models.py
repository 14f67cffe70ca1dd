"""LLM judges beside the human ones: judge models, judging runs, and one JudgeCall per judged item.

A JudgeCall is one judge × cell × display order × sample, created once (unique constraint) and moved through
its states by llm_collect's claim pattern (llm_collect/services/states.py), so a redelivered task never pays
twice for a finished item. Its picks live here, apart from surveys.Judgment: the human analysis never sees them.
"""

from django.conf import settings
from django.db import models
from django.db.models import Count, Q, Sum
from django.utils import timezone

from surveys.models import Answer, Cell, Study, System


class JudgeModel(models.Model):
    """A language model used as a judge, configured like an LLM System (same providers and fields)."""

    key = models.SlugField(max_length=64, unique=True, help_text="The name used on the command line, e.g. gpt-4o.")
    provider = models.CharField(max_length=20, choices=System.Provider.choices)
    model = models.CharField(
        max_length=100, help_text="Also matches a study's System of the same model (self-preference)."
    )
    base_url = models.URLField(blank=True)
    api_key_env = models.CharField(
        max_length=64, blank=True, help_text="Name of the environment variable holding the key."
    )
    parameters = models.JSONField(default=dict, blank=True, help_text="Provider parameters, e.g. temperature.")

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return self.key


class JudgingRun(models.Model):
    """One request to judge a study's cells with LLMs: which judges, how many samples, which orders."""

    class Orders(models.TextChoices):
        BOTH = "both", "Both display orders"
        ONE = "one", "One order (answer_a first)"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judging_runs")
    judges = models.ManyToManyField(JudgeModel, related_name="runs")
    samples = models.PositiveSmallIntegerField(default=1)
    orders = models.CharField(max_length=4, choices=Orders.choices, default=Orders.BOTH)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    planned = models.PositiveIntegerField(default=0, help_text="Calls this run queued.")
    already_present = models.PositiveIntegerField(
        default=0, help_text="Items judged before this run (not asked again)."
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.CheckConstraint(condition=Q(samples__gte=1), name="judgingrun_samples_positive")]

    def __str__(self) -> str:
        return f"{self.study.slug} judging run {self.pk}"

    def counts(self) -> dict:
        """This run's calls by status, plus tokens and the estimated cost."""
        rows = self.calls.values("status").annotate(n=Count("id"))
        counts = {status: 0 for status in JudgeCall.Status.values}
        counts.update({row["status"]: row["n"] for row in rows})
        totals = self.calls.aggregate(i=Sum("input_tokens"), o=Sum("output_tokens"), c=Sum("cost_estimate"))
        counts.update(
            total=sum(counts[s] for s in JudgeCall.Status.values),
            input_tokens=totals["i"] or 0,
            output_tokens=totals["o"] or 0,
            cost=float(totals["c"] or 0),
        )
        return counts


class JudgeCallQuerySet(models.QuerySet):
    def done(self):
        return self.filter(status=JudgeCall.Status.DONE)

    def for_study(self, study):
        return self.filter(cell__study=study)


class JudgeCall(models.Model):
    """One judge × cell × order × sample: the LLM calls that produce (at most) one set of picks."""

    class Status(models.TextChoices):  # the values llm_collect's states module expects
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed (provider error)"
        INVALID = "invalid", "Invalid output (flagged for the researcher)"

    class Order(models.TextChoices):
        AB = "ab", "answer_a shown first"
        BA = "ba", "answer_b shown first"

    run = models.ForeignKey(JudgingRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls")
    judge = models.ForeignKey(JudgeModel, on_delete=models.CASCADE, related_name="calls")
    cell = models.ForeignKey(Cell, on_delete=models.CASCADE, related_name="judge_calls")
    order = models.CharField(max_length=2, choices=Order.choices)
    sample = models.PositiveSmallIntegerField(default=1)
    first_answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    second_answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Provider calls made (paid for) so far.")
    claim = models.CharField(max_length=32, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    queued_at = models.DateTimeField(default=timezone.now)
    not_before = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    # The last call as sent and as received (never the key), and every attempt in history.
    raw_request = models.JSONField(default=dict, blank=True)
    raw_response = models.JSONField(default=dict, blank=True)
    raw_text = models.TextField(blank=True)
    error = models.TextField(blank=True)
    parse_error = models.TextField(blank=True)
    history = models.JSONField(default=list, blank=True)
    input_tokens = models.PositiveIntegerField(default=0, help_text="Summed over every attempt.")
    output_tokens = models.PositiveIntegerField(default=0, help_text="Summed over every attempt.")
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    model_version = models.CharField(max_length=200, blank=True)
    finish_reason = models.CharField(max_length=64, blank=True)
    cost_estimate = models.DecimalField(max_digits=12, decimal_places=6, default=0, help_text="USD, an estimate.")

    picks = models.JSONField(default=dict, blank=True, help_text='Question key → "A" (first shown) or "B".')
    reasons = models.JSONField(default=dict, blank=True, help_text="Question key → the judge's short reason.")

    objects = JudgeCallQuerySet.as_manager()

    class Meta:
        ordering = ["judge_id", "cell_id", "order", "sample"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "cell", "order", "sample"], name="judgecall_once_per_item"),
            models.CheckConstraint(condition=Q(sample__gte=1), name="judgecall_sample_positive"),
        ]
        indexes = [
            # Progress in the admin: "calls of this run, counted by status".
            models.Index(fields=["run", "status"], name="judgecall_run_status_idx"),
            # The sweep: "pending rows queued before a cutoff" and "running rows whose lease ran out".
            models.Index(fields=["status", "queued_at"], name="judgecall_sweep_idx"),
            # The sweep: "pending rows whose retry was due before a cutoff".
            models.Index(fields=["status", "not_before"], name="judgecall_overdue_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.judge.key} on cell {self.cell_id} {self.order} #{self.sample}"

    def winner_id(self, question_key: str) -> int | None:
        """The answer the judge picked on this question, or None without a pick."""
        pick = self.picks.get(question_key)
        return {"A": self.first_answer_id, "B": self.second_answer_id}.get(pick)
