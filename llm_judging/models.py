"""LLM judges beside the human ones: judge models, judging runs, and one JudgeCall per judged item.

A JudgeCall is one judge × cell × display order × sample: an llm_collect.models.LLMCall, created once (unique
constraint) and moved through its states by the one call mechanism (llm_collect/calls/), so a redelivered task
never pays twice for a finished item. Its picks live here, apart from surveys.Judgment: the human analysis never
sees them. See docs/architecture.md.
"""

from django.db import models

from llm_collect.models import CallRun, LLMCall
from surveys.key_variables import AllowedKeyVariable
from surveys.models import Answer, Cell, Study, System


class JudgeModel(models.Model):
    """A language model used as a judge, configured like an LLM System (same providers and fields).

    It belongs to one study's team, as a System does: only that team sees, changes and uses it (docs/teams.md).
    Without a study (made before judge models had one, never used) only superusers see it."""

    study = models.ForeignKey(
        Study,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="judge_models",
        help_text="Whose team sees, changes and uses it: only that study's runs can choose it.",
    )
    key = models.SlugField(max_length=64, help_text="The name used on the command line, e.g. gpt-4o.")
    provider = models.CharField(max_length=20, choices=System.Provider.choices)
    model = models.CharField(
        max_length=100, help_text="Also matches a study's System of the same model (self-preference)."
    )
    base_url = models.URLField(blank=True)
    api_key_env = models.CharField(
        max_length=64,
        blank=True,
        validators=[AllowedKeyVariable()],
        help_text="Name of the environment variable holding the key (one the setting LLM_KEY_VARIABLES allows).",
    )
    parameters = models.JSONField(default=dict, blank=True, help_text="Provider parameters, e.g. temperature.")

    class Meta:
        ordering = ["key"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "key"],
                name="judgemodel_key_once_per_study",
                violation_error_message="This study already has a judge model with this key.",
            ),
            models.UniqueConstraint(
                fields=["key"],
                condition=models.Q(study__isnull=True),
                name="judgemodel_key_once_without_study",
                violation_error_message="A judge model without a study already has this key.",
            ),
        ]

    def __str__(self) -> str:
        return self.key


class JudgingRun(CallRun):
    """One request to judge a study's cells with LLMs: which judges, how many samples, which orders."""

    calls_name = "calls"

    class Orders(models.TextChoices):
        BOTH = "both", "Both display orders"
        ONE = "one", "One order (answer_a first)"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judging_runs")
    judges = models.ManyToManyField(JudgeModel, related_name="runs")
    samples = models.PositiveSmallIntegerField(default=1)
    orders = models.CharField(max_length=4, choices=Orders.choices, default=Orders.BOTH)

    class Meta(CallRun.Meta):
        pass

    def __str__(self) -> str:
        return f"{self.study.slug} judging run {self.pk}"


class JudgeCallQuerySet(models.QuerySet):
    def done(self):
        return self.filter(status=JudgeCall.Status.DONE)

    def for_study(self, study):
        return self.filter(cell__study=study)


class JudgeCall(LLMCall):
    """One judge × cell × order × sample: the LLM calls that produce (at most) one set of picks."""

    class Order(models.TextChoices):
        AB = "ab", "answer_a shown first"
        BA = "ba", "answer_b shown first"

    run = models.ForeignKey(JudgingRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="calls")
    judge = models.ForeignKey(JudgeModel, on_delete=models.CASCADE, related_name="calls")
    cell = models.ForeignKey(Cell, on_delete=models.CASCADE, related_name="judge_calls")
    order = models.CharField(max_length=2, choices=Order.choices)
    first_answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    second_answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    picks = models.JSONField(default=dict, blank=True, help_text='Question key → "A" (first shown) or "B".')
    reasons = models.JSONField(default=dict, blank=True, help_text="Question key → the judge's short reason.")

    objects = JudgeCallQuerySet.as_manager()

    class Meta(LLMCall.Meta):
        ordering = ["judge_id", "cell_id", "order", "sample"]
        constraints = [
            *LLMCall.Meta.constraints,
            models.UniqueConstraint(fields=["judge", "cell", "order", "sample"], name="judgecall_once_per_item"),
        ]

    def __str__(self) -> str:
        return f"{self.judge.key} on cell {self.cell_id} {self.order} #{self.sample}"

    def winner_id(self, question_key: str) -> int | None:
        """The answer the judge picked on this question, or None without a pick."""
        pick = self.picks.get(question_key)
        return {"A": self.first_answer_id, "B": self.second_answer_id}.get(pick)
