"""What a study is made of: its settings, questions, vignettes, systems, and the systems' answers."""

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from .translations import TRANSLATIONS_HELP, check_translations

MAX_FEATURES = 5
WEIGHT_TOTAL = 100

DEFAULT_ATTENTION_PROMPT = gettext_noop(
    "This question checks that you are reading carefully. Please select the second of the two "
    "options below, whatever you think of them."
)
DEFAULT_ATTENTION_OPTIONS = [gettext_noop("I read the answers quickly"), gettext_noop("I read the answers carefully")]

# The method's five questions, by key, in the method's order (what a new study in the admin starts with).
# The source study asked about "participants" (tests/fixtures/paper); these are the demo's and the example
# study file's wording of the same five questions, which fits answers written by models and people alike.
METHOD_QUESTIONS = [
    (
        "features",
        "Which of the two answers did a better job of picking out the features of the situation that matter morally?",
    ),
    (
        "weighting",
        "Which of the two answers did a better job of judging how much each of its moral features should count "
        "compared with the others?",
    ),
    (
        "reasons",
        "Given the features each answer picked out, which one did a better job of explaining why those features matter?",
    ),
    (
        "conclusion",
        "Which of the two answers did a better job of bringing its reasons together into a clear overall verdict "
        "about what should be done?",
    ),
    (
        "additional_info",
        "Which of the two answers did a better job of pointing out further information that would change or sharpen "
        "the moral judgement?",
    ),
]


class Study(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        LIVE = "live", "Live"
        CLOSED = "closed", "Closed"

    class OrderRule(models.TextChoices):
        # The source method: one order on odd-numbered vignettes, the reverse on even ones.
        ALTERNATE_BY_VIGNETTE = "alternate-by-vignette", "Alternate by vignette (the method's)"
        BALANCED_PER_CELL = "balanced-per-cell", "Balanced per cell"

    class InvalidPolicy(models.TextChoices):
        REJECT = "reject", "Reject with Prolific's category and a message"
        ASK_RETURN = "ask-return", "Ask the participant to return the submission"
        APPROVE = "approve", "Approve anyway (pay everyone, exclude from analysis)"

    class ProlificCurrency(models.TextChoices):
        GBP = "GBP", "GBP (£)"
        USD = "USD", "USD ($)"

    TRANSLATABLE_KEYS = {
        "name": "text",
        "description": "text",
        "attention_prompt": "text",
        "attention_options": "two texts",
    }

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, help_text="Shown to participants on the information page.")
    language = models.CharField(
        max_length=16,
        default="en",
        help_text="The participants' language (a code such as en, de, ar): the survey's interface and the texts "
        "given for it under Translations.",
    )
    translations = models.JSONField(default=dict, blank=True, help_text=TRANSLATIONS_HELP)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    reference_system = models.ForeignKey(
        "System",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Estimates are reported relative to this system (the method: lay humans).",
    )

    # Design
    repetitions = models.PositiveSmallIntegerField(
        default=8, help_text="Complete valid assignments wanted per cell (system pair × vignette)."
    )
    vignettes_per_participant = models.PositiveSmallIntegerField(
        default=5, help_text="Judging pages per participant, each a different vignette."
    )
    order_rule = models.CharField(max_length=32, choices=OrderRule.choices, default=OrderRule.ALTERNATE_BY_VIGNETTE)
    answers_per_respondent = models.PositiveSmallIntegerField(
        default=3, help_text="Vignettes each human or expert respondent writes answers for."
    )
    minimum_seconds = models.PositiveIntegerField(
        default=120,
        help_text="Participants who finish all judging pages faster than this are flagged as too fast.",
    )
    fast_fraction_of_median = models.FloatField(
        default=0.3,
        help_text=(
            "Also flag as too fast below this fraction of the study's median completion time "
            "(Prolific: 'exceptionally fast' against the study's own times, never one quick page)."
        ),
    )
    reservation_minutes = models.PositiveIntegerField(
        default=60, help_text="A participant's reserved cells are released after this many minutes."
    )

    # Analysis
    bias_reduced = models.BooleanField(
        default=False,
        help_text=(
            "Fit Firth's bias-reduced Bradley-Terry model (BTm(..., br = TRUE)) for the reported estimates: "
            "finite estimates when a system never wins or never loses a question. Applies from the next refit."
        ),
    )

    # Attention check (Prolific's rules: instructed, two options, clearly stated)
    attention_prompt = models.TextField(default=DEFAULT_ATTENTION_PROMPT)
    attention_options = models.JSONField(
        default=list, blank=True, help_text="Two options; the correct choice is the second."
    )

    # Prolific
    prolific_study_id = models.CharField(max_length=64, blank=True)
    completion_code = models.CharField(max_length=32, blank=True, help_text="Completed (valid or not).")
    failed_attention_code = models.CharField(max_length=32, blank=True)
    no_consent_code = models.CharField(max_length=32, blank=True)
    screened_out_code = models.CharField(
        max_length=32, blank=True, help_text="Study full or screened out: never a reason to reject."
    )
    # The answer-writing survey (/r/) ends with its own codes: a Prolific study of writers is not one of judges.
    answering_completion_code = models.CharField(
        max_length=32, blank=True, help_text="Answer writing: all pages written."
    )
    answering_no_consent_code = models.CharField(
        max_length=32, blank=True, help_text="Answer writing: did not consent."
    )
    answering_full_code = models.CharField(
        max_length=32,
        blank=True,
        help_text="Answer writing: the study takes no more writers (closed). Never a reason to reject.",
    )
    invalid_policy = models.CharField(max_length=16, choices=InvalidPolicy.choices, default=InvalidPolicy.ASK_RETURN)
    estimated_minutes = models.PositiveSmallIntegerField(
        default=20,
        help_text="Advertised duration. Prolific allows rejecting for one failed attention check only under 5 minutes.",
    )
    # Prolific from the admin (surveys/prolific/drafts.py): what the draft's reward and places are made of.
    prolific_currency = models.CharField(
        max_length=3,
        choices=ProlificCurrency.choices,
        default=ProlificCurrency.GBP,
        help_text="Your Prolific workspace's currency: rewards are sent in its pence or cents.",
    )
    prolific_hourly_rate = models.DecimalField(
        max_digits=6,
        decimal_places=2,
        default=Decimal("9.00"),
        help_text="Target pay per hour, in the currency above. The reward is this × estimated minutes ÷ 60, rounded "
        "up to a whole penny or cent. Prolific: at least £6 / $8, recommended £9 / $12.",
    )
    prolific_margin_percent = models.PositiveSmallIntegerField(
        default=10,
        help_text="Over-recruitment margin: places on Prolific beyond the design's judges, for returns and exclusions.",
    )
    prolific_status = models.CharField(
        max_length=20, blank=True, help_text="The Prolific study's status when MoralJudge last saw it."
    )
    prolific_synced_at = models.DateTimeField(null=True, blank=True)

    # LLM instrument
    system_prompt = models.TextField(blank=True, help_text="Empty: the method's instrument (llm_collect/prompts.py).")
    user_prompt = models.TextField(
        blank=True,
        help_text="{character_name} and {vignette} are filled in. Empty: the method's instrument and its five questions.",
    )

    created_at = models.DateTimeField(default=timezone.now)
    went_live_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "studies"
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(repetitions__gte=1),
                name="study_repetitions_positive",
                violation_error_message="Repetitions must be at least 1: each cell needs at least one complete assignment.",
            ),
            models.CheckConstraint(
                condition=Q(vignettes_per_participant__gte=1),
                name="study_vignettes_per_participant_positive",
                violation_error_message="Vignettes per participant must be at least 1.",
            ),
            models.CheckConstraint(
                condition=Q(prolific_hourly_rate__gt=0),
                name="study_prolific_hourly_rate_positive",
                violation_error_message="The hourly rate must be more than 0.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        super().clean()
        check_translations(self)

    @property
    def is_live(self) -> bool:
        return self.status == self.Status.LIVE


# Orderings name foreign keys by their _id column: ordering by the relation itself would join up the
# chain to Study (and its own ordering) on every query that does not order for itself.
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


class Question(models.Model):
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

    def clean(self):
        super().clean()
        check_translations(self)


class Vignette(models.Model):
    TRANSLATABLE_KEYS = {"text": "text", "character": "text"}

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="vignettes")
    key = models.SlugField(max_length=64)
    character = models.CharField(max_length=100, help_text="The main character, filled into the prompt.")
    source = models.CharField(max_length=300, blank=True)
    text = models.TextField()
    translations = models.JSONField(default=dict, blank=True, help_text=TRANSLATIONS_HELP)
    position = models.PositiveSmallIntegerField(default=0)

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
        max_length=64, blank=True, help_text="Name of the environment variable holding the key."
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


class AnswerQuerySet(models.QuerySet):
    def selected(self):
        return self.filter(selected=True)

    def for_study(self, study):
        return self.filter(vignette__study=study)


class Answer(models.Model):
    """One system's written reply to one vignette (the source study says response)."""

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

    objects = AnswerQuerySet.as_manager()

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

    def clean(self):
        super().clean()
        check_translations(self)

    def word_count(self) -> int:
        parts = [self.action, self.additional_information]
        parts += [f"{f.feature} {f.reason}" for f in self.features.all()]
        return sum(len(part.split()) for part in parts)


class Feature(models.Model):
    """A morally relevant feature of an answer, with its weight and reason.

    At most five per answer (position 1..5, unique per answer); weights 0..100. That weights sum
    to 100 is checked by the services and, on PostgreSQL, by a deferred constraint trigger.
    """

    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="features")
    position = models.PositiveSmallIntegerField()
    feature = models.TextField()
    weight = models.PositiveSmallIntegerField()
    reason = models.TextField(blank=True)

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
