"""The study: its design, quality and Prolific settings, LLM instrument and history.

Its parts are in study_parts.py (questions, vignettes, systems) and answers.py (the systems' answers, their features).
"""

from decimal import Decimal

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_noop

from .translations import TRANSLATIONS_HELP, check_translations

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
        gettext_noop(
            "Which of the two answers did a better job of picking out the features of the situation that matter morally?"
        ),
    ),
    (
        "weighting",
        gettext_noop(
            "Which of the two answers did a better job of judging how much each of its moral features should count compared with the others?"
        ),
    ),
    (
        "reasons",
        gettext_noop(
            "Given the features each answer picked out, which one did a better job of explaining why those features matter?"
        ),
    ),
    (
        "conclusion",
        gettext_noop(
            "Which of the two answers did a better job of bringing its reasons together into a clear overall verdict about what should be done?"
        ),
    ),
    (
        "additional_info",
        gettext_noop(
            "Which of the two answers did a better job of pointing out further information that would change or sharpen the moral judgement?"
        ),
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

    class ProlificLink(models.TextChoices):
        CREATED = "created", "Created as a draft by this deployment"
        PROVEN = "proven", "Linked by hand: its study link on Prolific leads to this study"
        EARLIER = "earlier", "Linked before ownership was checked (kept by the migration)"

    class ProlificCurrency(models.TextChoices):
        GBP = "GBP", "GBP (£)"
        USD = "USD", "USD ($)"

    TRANSLATABLE_KEYS = {
        "name": "text",
        "description": "text",
        "researchers_contact": "text",
        "ethics_reference": "text",
        "data_retention": "text",
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
    prolific_study_id = models.CharField(
        max_length=64,
        blank=True,
        help_text="Set when 'Create or update Prolific draft' creates the Prolific study; linked by hand only once "
        "Prolific's API shows it is this study's (surveys/prolific/ownership.py).",
    )
    prolific_link = models.CharField(
        max_length=16,
        choices=ProlificLink.choices,
        blank=True,
        help_text="How the Prolific study was found to be this study's: every Prolific action checks it.",
    )
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
    # Prolific from the admin (surveys/prolific/drafts/): what the draft's reward and places are made of.
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
    prolific_eligibility = models.JSONField(
        default=dict,
        blank=True,
        help_text="Who may take the study on Prolific, sent as the draft's filters (surveys/prolific/eligibility.py).",
    )
    prolific_status = models.CharField(
        max_length=20, blank=True, help_text="The Prolific study's status when MoralJudge last saw it."
    )
    prolific_synced_at = models.DateTimeField(null=True, blank=True)

    # Without Prolific (a lab study), and what consent says for a research ethics committee (issue 23).
    lab_study = models.BooleanField(
        default=False,
        help_text="Run without Prolific (a lab or classroom): the judging link works without Prolific's ids, and "
        "judges end on a thank-you page (with the completion code, if set, to show the researcher) instead of "
        "being sent to Prolific. Many judges from one room share an address: raise ENTRY_RATE_LIMIT.",
    )
    researchers_contact = models.TextField(
        blank=True, help_text="Shown on the consent page: who participants may contact with questions (name, email)."
    )
    ethics_reference = models.CharField(
        max_length=200, blank=True, help_text="Shown on the consent page: the ethics approval (committee, reference)."
    )
    data_retention = models.TextField(
        blank=True, help_text="Shown on the consent page: how long the data are kept, where, and who may see them."
    )

    # LLM instrument
    system_prompt = models.TextField(blank=True, help_text="Empty: the method's instrument (llm_collect/prompts.py).")
    user_prompt = models.TextField(
        blank=True,
        help_text="{character_name} and {vignette} are filled in. Empty: the method's instrument and its five questions.",
    )

    # What participants are shown (models/snapshots.py): written on going live, replaced only by a data fix.
    # RESTRICT: the one shown cannot be deleted alone (a live study must keep one), only with its study.
    snapshot = models.ForeignKey(
        "StudySnapshot", null=True, blank=True, editable=False, on_delete=models.RESTRICT, related_name="+"
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
            models.UniqueConstraint(
                fields=["prolific_study_id"],
                condition=~Q(prolific_study_id=""),
                name="study_prolific_study_once",
                violation_error_message="This Prolific study belongs to another study of this deployment.",
            ),
            models.CheckConstraint(
                # Pages of a study past draft read its snapshot (services/live_content.py): going live writes it.
                condition=Q(status="draft") | Q(snapshot__isnull=False),
                name="study_shown_from_a_snapshot_once_live",
                violation_error_message="A study that has gone live is shown from its snapshot: it cannot be without one.",
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
