"""The systems' answers: one system's written reply to one vignette, and its morally relevant features."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from .freeze import FrozenContentQuerySet, FrozenWithStudy
from .study import Study
from .study_parts import System, Vignette
from .translations import TRANSLATIONS_HELP, check_translations

MAX_FEATURES = 5
WEIGHT_TOTAL = 100


class AnswerQuerySet(FrozenContentQuerySet):
    def selected(self):
        return self.filter(selected=True)

    def for_study(self, study):
        return self.filter(vignette__study=study)


class Answer(FrozenWithStudy):
    """One system's written reply to one vignette (the source study says response).

    Frozen once its study is live and it is the selected one (models/freeze.py); how it was written stays writable.
    """

    STUDY_PATH = "vignette__study"
    SHOWN = Q(selected=True)
    WRITABLE_WHEN_LIVE = frozenset({"authenticity", "writing_signals", "raw_text"})

    class Authenticity(models.TextChoices):
        # How the writing behaved (surveys/services/authenticity.py, docs/authenticity.md); blank: not written here.
        HIGH = "high", "High"
        MIXED = "mixed", "Mixed"
        LOW = "low", "Low"
        UNKNOWN = "unknown", "Unknown (no signals)"

    class Origin(models.TextChoices):
        IMPORTED = "imported", "Imported from a study file"
        LLM = "llm", "Collected from an LLM"
        RESPONDENT = "respondent", "Written in the answer survey"
        ADMIN = "admin", "Entered in the admin"

    TRANSLATABLE_KEYS = {"action": "text", "additional_information": "text", "features": "features"}

    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="answers")
    vignette = models.ForeignKey(Vignette, on_delete=models.CASCADE, related_name="answers")
    sample = models.PositiveSmallIntegerField(default=1)
    action = models.TextField(blank=True, help_text="What should be done next: the conclusion.")
    translations = models.JSONField(default=dict, blank=True, help_text=TRANSLATIONS_HELP)
    additional_information = models.TextField(blank=True)
    raw_text = models.TextField(blank=True)
    origin = models.CharField(max_length=12, choices=Origin.choices, default=Origin.ADMIN)
    selected = models.BooleanField(default=False, help_text="The one answer judges see for this system × vignette.")
    selected_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    selected_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    writing_signals = models.JSONField(
        null=True, blank=True, help_text="What the answer-writing page recorded while it was written (null: unknown)."
    )
    authenticity = models.CharField(max_length=8, choices=Authenticity.choices, blank=True)
    low_authenticity_confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    low_authenticity_confirmed_at = models.DateTimeField(
        null=True, blank=True, help_text="When a researcher confirmed selecting this low-authenticity answer."
    )

    objects = AnswerQuerySet.as_manager()

    # Not a field: the judging pages attach the answer's features here, in order (surveys/services/live_content.py).
    shown_features: list["Feature"]

    class Meta:
        ordering = ["vignette_id", "system_id", "sample"]
        constraints = [
            models.UniqueConstraint(
                fields=["system", "vignette", "sample"],
                name="answer_sample_unique",
                violation_error_message="This system already has an answer with this sample number for this vignette: choose another sample number.",
            ),
            models.UniqueConstraint(
                fields=["system", "vignette"],
                condition=Q(selected=True),
                name="answer_one_selected_per_cell",
                violation_error_message="Another answer is already the one judges see for this system and vignette.",
            ),
            models.CheckConstraint(
                condition=Q(sample__gte=1),
                name="answer_sample_positive",
                violation_error_message="The sample number is a whole number of at least 1.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.system.key} on {self.vignette.key} #{self.sample}"

    def shown_in_live_study(self) -> bool:
        return (
            self.selected
            and Study.objects.filter(vignettes=self.vignette_id).exclude(status=Study.Status.DRAFT).exists()
        )

    def clean(self):
        super().clean()
        check_translations(self)

    def word_count(self) -> int:
        parts = [self.action, self.additional_information]
        parts += [f"{f.feature} {f.reason}" for f in self.features.all()]
        return sum(len(part.split()) for part in parts)


class Feature(FrozenWithStudy):
    """A morally relevant feature of an answer, with its weight and reason; frozen with a selected live answer.

    At most five per answer (position 1..5, unique per answer); weights 0..100. That weights sum
    to 100 is checked by the services and, on PostgreSQL, by a deferred constraint trigger.
    """

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="features")
    position = models.PositiveSmallIntegerField()
    feature = models.TextField()
    weight = models.PositiveSmallIntegerField()
    reason = models.TextField(blank=True)

    STUDY_PATH = "answer__vignette__study"
    SHOWN = Q(answer__selected=True)
    objects = FrozenContentQuerySet.as_manager()

    class Meta:
        ordering = ["answer_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["answer", "position"],
                name="feature_position_unique",
                violation_error_message="Two features of an answer cannot share a position.",
            ),
            models.CheckConstraint(
                condition=Q(position__gte=1) & Q(position__lte=MAX_FEATURES),
                name="feature_at_most_five",
                violation_error_message=f"An answer has at most {MAX_FEATURES} features, in positions 1 to {MAX_FEATURES}.",
            ),
            # The database allows 0 (stored answers may hold one); the services refuse it, so the words say 1.
            models.CheckConstraint(
                condition=Q(weight__gte=0) & Q(weight__lte=WEIGHT_TOTAL),
                name="feature_weight_0_100",
                violation_error_message=f"A weight is a whole number from 1 to {WEIGHT_TOTAL}.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.feature} ({self.weight})"

    def shown_in_live_study(self) -> bool:
        live = Answer.objects.filter(pk=self.answer_id, selected=True).exclude(
            vignette__study__status=Study.Status.DRAFT
        )
        return live.exists()
