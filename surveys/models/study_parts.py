"""A study's parts: the questions judges answer, the vignettes, and the systems whose answers are compared.

Orderings name foreign keys by their _id column: ordering by the relation itself would join up the
chain to Study (and its own ordering) on every query that does not order for itself.
"""

from django.db import models
from django.db.models import Q

from ..key_variables import AllowedKeyVariable
from .freeze import FrozenContentQuerySet, FrozenWithStudy
from .study import Study
from .translations import TRANSLATIONS_HELP, check_translations


def _study_is_live(study_id: int) -> bool:
    return Study.objects.filter(pk=study_id).exclude(status=Study.Status.DRAFT).exists()


# Short labels of the method's five questions, for studies whose questions have no label of their own.
METHOD_QUESTION_LABELS = {
    "features": "Features",
    "weighting": "Weighting",
    "reasons": "Reasons",
    "conclusion": "Conclusion",
    "additional_info": "Additional information",
}


def question_label(key: str, label: str = "") -> str:
    """A question's short label: its own, the method's for its key, else the key in words."""
    return label or METHOD_QUESTION_LABELS.get(key) or key.replace("_", " ").replace("-", " ").capitalize()


class Question(FrozenWithStudy):
    TRANSLATABLE_KEYS = {"text": "text"}

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="questions")
    key = models.SlugField(max_length=64)
    label = models.CharField(
        max_length=60,
        blank=True,
        help_text="A short name for headings and plots, e.g. “Weighting”. Empty: the method's name for the key.",
    )
    text = models.TextField()
    translations = models.JSONField(default=dict, blank=True, help_text=TRANSLATIONS_HELP)
    position = models.PositiveSmallIntegerField(default=0)

    objects = FrozenContentQuerySet.as_manager()

    class Meta:
        ordering = ["study_id", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "key"],
                name="question_key_unique_in_study",
                violation_error_message="Another question of this study already has this key: each question needs its own key.",
            )
        ]

    def __str__(self) -> str:
        return self.key

    @property
    def short_label(self) -> str:
        return question_label(self.key, self.label)

    def shown_in_live_study(self) -> bool:
        return _study_is_live(self.study_id)

    def clean(self):
        super().clean()
        check_translations(self)


class Vignette(FrozenWithStudy):
    TRANSLATABLE_KEYS = {"text": "text", "character": "text"}

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="vignettes")
    key = models.SlugField(max_length=64)
    character = models.CharField(max_length=100, help_text="The main character, filled into the prompt.")
    source = models.CharField(max_length=300, blank=True)
    # The kind of vignette (e.g. published, novel), to compare a system's results between kinds. Empty: one set.
    set = models.SlugField(
        max_length=64,
        blank=True,
        help_text="The set (kind) of vignette, e.g. “published” or “novel”: results are given per set and the sets "
        "compared. Empty for a study with one set.",
    )
    text = models.TextField()
    translations = models.JSONField(default=dict, blank=True, help_text=TRANSLATIONS_HELP)
    position = models.PositiveSmallIntegerField(default=0)

    objects = FrozenContentQuerySet.as_manager()

    class Meta:
        ordering = ["study_id", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "key"],
                name="vignette_key_unique_in_study",
                violation_error_message="Another vignette of this study already has this key: each vignette needs its own key.",
            )
        ]

    def __str__(self) -> str:
        return self.key

    def shown_in_live_study(self) -> bool:
        return _study_is_live(self.study_id)

    def clean(self):
        super().clean()
        check_translations(self)


class System(models.Model):
    class Kind(models.TextChoices):
        LLM = "llm", "Language model"
        HUMAN = "human", "Lay human"
        EXPERT = "expert", "Expert"

    class Provider(models.TextChoices):
        OPENAI = "openai", "OpenAI Chat Completions"
        ANTHROPIC = "anthropic", "Anthropic Messages"
        GEMINI = "gemini", "Google Gemini"
        OPENAI_COMPATIBLE = "openai-compatible", "OpenAI-compatible endpoint"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="systems")
    key = models.SlugField(max_length=64)
    label = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.LLM)
    provider = models.CharField(max_length=20, choices=Provider.choices, blank=True)
    model = models.CharField(max_length=100, blank=True)
    base_url = models.URLField(blank=True)
    api_key_env = models.CharField(
        max_length=64,
        blank=True,
        validators=[AllowedKeyVariable()],
        help_text="Name of the environment variable holding the key (one the setting LLM_KEY_VARIABLES allows).",
    )
    parameters = models.JSONField(default=dict, blank=True, help_text="Provider parameters, e.g. temperature.")
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["study_id", "position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "key"],
                name="system_key_unique_in_study",
                violation_error_message="Another system of this study already has this key: each system needs its own key.",
            ),
            models.CheckConstraint(
                condition=~Q(kind="llm") | (~Q(provider="") & ~Q(model="")),
                name="system_llm_has_provider_and_model",
                violation_error_message="A language-model system needs a provider and a model (a human or expert system needs neither).",
            ),
        ]

    def __str__(self) -> str:
        return self.label or self.key
