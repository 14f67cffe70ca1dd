"""The study domain: what a study is made of, who takes part, and what they judged.

The database holds the invariants (see the named constraints); services in this app do the writes.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

MAX_FEATURES = 5
WEIGHT_TOTAL = 100

DEFAULT_ATTENTION_PROMPT = (
    "This question checks that you are reading carefully. Please select the second of the two "
    "options below, whatever you think of them."
)
DEFAULT_ATTENTION_OPTIONS = ["I read the answers quickly", "I read the answers carefully"]


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

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, help_text="Shown to participants on the information page.")
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
    invalid_policy = models.CharField(max_length=16, choices=InvalidPolicy.choices, default=InvalidPolicy.ASK_RETURN)
    estimated_minutes = models.PositiveSmallIntegerField(
        default=20,
        help_text="Advertised duration. Prolific allows rejecting for one failed attention check only under 5 minutes.",
    )

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
            models.CheckConstraint(condition=Q(repetitions__gte=1), name="study_repetitions_positive"),
            models.CheckConstraint(
                condition=Q(vignettes_per_participant__gte=1), name="study_vignettes_per_participant_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_live(self) -> bool:
        return self.status == self.Status.LIVE


# Orderings name foreign keys by their _id column: ordering by the relation itself would join up the
# chain to Study (and its own ordering) on every query that does not order for itself.
class Question(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="questions")
    key = models.SlugField(max_length=64)
    text = models.TextField()
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["study_id", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["study", "key"], name="question_key_unique_in_study")]

    def __str__(self) -> str:
        return self.key


class Vignette(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="vignettes")
    key = models.SlugField(max_length=64)
    character = models.CharField(max_length=100, help_text="The main character, filled into the prompt.")
    source = models.CharField(max_length=300, blank=True)
    text = models.TextField()
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["study_id", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["study", "key"], name="vignette_key_unique_in_study")]

    def __str__(self) -> str:
        return self.key


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
            models.UniqueConstraint(fields=["study", "key"], name="system_key_unique_in_study"),
            models.CheckConstraint(
                condition=~Q(kind="llm") | (~Q(provider="") & ~Q(model="")),
                name="system_llm_has_provider_and_model",
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

    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="answers")
    vignette = models.ForeignKey(Vignette, on_delete=models.CASCADE, related_name="answers")
    sample = models.PositiveSmallIntegerField(default=1)
    action = models.TextField(blank=True, help_text="What should be done next: the conclusion.")
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
            models.UniqueConstraint(fields=["system", "vignette", "sample"], name="answer_sample_unique"),
            models.UniqueConstraint(
                fields=["system", "vignette"], condition=Q(selected=True), name="answer_one_selected_per_cell"
            ),
            models.CheckConstraint(condition=Q(sample__gte=1), name="answer_sample_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.system.key} on {self.vignette.key} #{self.sample}"

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
            models.UniqueConstraint(fields=["answer", "position"], name="feature_position_unique"),
            models.CheckConstraint(
                condition=Q(position__gte=1) & Q(position__lte=MAX_FEATURES), name="feature_at_most_five"
            ),
            models.CheckConstraint(
                condition=Q(weight__gte=0) & Q(weight__lte=WEIGHT_TOTAL), name="feature_weight_0_100"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.feature} ({self.weight})"


class Cell(models.Model):
    """An unordered system pair × a vignette: the unit of allocation.

    `completed + reserved <= target` is a database constraint, so a conditional UPDATE that would
    overfill a cell fails instead of overfilling it, whatever the number of simultaneous arrivals.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="cells")
    vignette = models.ForeignKey(Vignette, on_delete=models.CASCADE, related_name="cells")
    answer_a = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    answer_b = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    target = models.PositiveSmallIntegerField()
    completed = models.PositiveSmallIntegerField(default=0)
    reserved = models.PositiveSmallIntegerField(default=0)
    # Balanced-per-cell order: how many times answer_a has been shown first so far.
    a_first_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["study_id", "vignette_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["vignette", "answer_a", "answer_b"], name="cell_pair_unique_per_vignette"),
            models.CheckConstraint(
                condition=Q(completed__lte=F("target") - F("reserved")), name="cell_never_overfilled"
            ),
            models.CheckConstraint(condition=~Q(answer_a=F("answer_b")), name="cell_two_different_answers"),
        ]
        indexes = [
            # Allocation: "cells of this study's vignette with room, least filled first".
            models.Index(fields=["study", "vignette", "completed", "reserved"], name="cell_allocation_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.vignette.key}: {self.answer_a.system.key} vs {self.answer_b.system.key}"

    @property
    def fill(self) -> int:
        return self.completed + self.reserved


class Participant(models.Model):
    """A judge who arrived from Prolific (or a researcher previewing)."""

    class Status(models.TextChoices):
        STARTED = "started", "Started"
        NO_CONSENT = "no-consent", "Did not consent"
        CONSENTED = "consented", "Consented"
        JUDGING = "judging", "Judging"
        COMPLETED = "completed", "Completed"
        FAILED_ATTENTION = "failed-attention", "Failed the attention check"
        SCREENED_OUT = "screened-out", "Screened out (study full)"
        RETURNED = "returned", "Returned on Prolific"
        TIMED_OUT = "timed-out", "Timed out"
        EXPIRED = "expired", "Reservation expired"

    class Exclusion(models.TextChoices):
        NONE = "", "Not excluded"
        NO_ANONYMISED_CONSENT = "no-anonymised-consent", "No consent to anonymised data use"
        FAILED_ATTENTION = "failed-attention", "Failed the attention check"
        STRAIGHT_LINING = "straight-lining", "Only the first or only the second option throughout"
        TOO_FAST = "too-fast", "Exceptionally fast"
        RETURNED = "returned", "Returned or timed out"
        RESEARCHER = "researcher", "Excluded by the researcher"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    prolific_pid = models.CharField(max_length=64)
    prolific_study_id = models.CharField(max_length=64, blank=True)
    session_id = models.CharField(max_length=64, blank=True, help_text="Prolific's submission id.")
    is_preview = models.BooleanField(default=False, help_text="A logged-in researcher's preview: never counts.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.STARTED)
    exclusion = models.CharField(max_length=24, choices=Exclusion.choices, default=Exclusion.NONE, blank=True)
    flags = models.JSONField(default=list, blank=True, help_text="Every quality flag raised, with its reason.")
    consented_at = models.DateTimeField(null=True, blank=True)
    anonymised_data_consent = models.BooleanField(null=True)
    demographics = models.JSONField(default=dict, blank=True)
    attention_choice = models.PositiveSmallIntegerField(null=True, blank=True)
    first_position_share = models.FloatField(null=True, blank=True)
    seconds_total = models.FloatField(default=0)
    prolific_status = models.CharField(max_length=24, blank=True)
    review_status = models.CharField(
        max_length=24, blank=True, help_text="What we told Prolific: approved, rejected, …"
    )
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study_id", "-started_at"]
        constraints = [
            models.UniqueConstraint(fields=["study", "prolific_pid"], name="participant_once_per_study"),
            models.UniqueConstraint(
                fields=["session_id"], condition=~Q(session_id=""), name="participant_session_unique"
            ),
        ]
        indexes = [
            # Reopening cells and progress counts: "participants of this study by status".
            models.Index(fields=["study", "status"], name="participant_status_idx"),
        ]

    def __str__(self) -> str:
        return self.prolific_pid

    @property
    def is_valid(self) -> bool:
        return self.status == self.Status.COMPLETED and not self.exclusion and not self.is_preview


class AssignmentQuerySet(models.QuerySet):
    def open_for(self, participant):
        return self.filter(participant=participant, status=Assignment.Status.RESERVED)


class Assignment(models.Model):
    """One participant's task to judge one cell, shown as Answer A (first) beside Answer B (second)."""

    class Status(models.TextChoices):
        RESERVED = "reserved", "Reserved"
        COMPLETED = "completed", "Completed"
        RELEASED = "released", "Released"

    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="assignments")
    cell = models.ForeignKey(Cell, on_delete=models.PROTECT, related_name="assignments")
    vignette = models.ForeignKey(Vignette, on_delete=models.PROTECT, related_name="+")
    first_answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    second_answer = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    position = models.PositiveSmallIntegerField(help_text="1 for the first judging page, 2 for the second, …")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RESERVED)
    counts_toward_cell = models.BooleanField(
        default=True, help_text="Whether this assignment currently holds a place in its cell's counters."
    )
    reserved_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    shown_at = models.DateTimeField(
        null=True, blank=True, help_text="When the judging page was first shown: seconds on page count from here."
    )
    completed_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)

    objects = AssignmentQuerySet.as_manager()

    class Meta:
        ordering = ["participant_id", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "vignette"], name="assignment_vignette_once_per_participant"
            ),
            models.UniqueConstraint(fields=["participant", "position"], name="assignment_position_unique"),
        ]
        indexes = [
            # Expiry sweep: "reserved assignments whose reservation has run out".
            models.Index(fields=["status", "expires_at"], name="assignment_expiry_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.participant} page {self.position}"


class JudgmentQuerySet(models.QuerySet):
    def valid(self):
        """Judgments that enter the analysis: completed, unexcluded, real (not preview) participants."""
        return self.filter(
            assignment__status=Assignment.Status.COMPLETED,
            assignment__participant__status=Participant.Status.COMPLETED,
            assignment__participant__exclusion="",
            assignment__participant__is_preview=False,
        )

    def for_study(self, study):
        return self.filter(question__study=study)


class Judgment(models.Model):
    """One pick on one question of one assignment."""

    class Position(models.TextChoices):
        FIRST = "first", "First (A)"
        SECOND = "second", "Second (B)"

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="judgments")
    question = models.ForeignKey(Question, on_delete=models.PROTECT, related_name="judgments")
    winner = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    loser = models.ForeignKey(Answer, on_delete=models.PROTECT, related_name="+")
    winner_position = models.CharField(max_length=6, choices=Position.choices)
    seconds_on_page = models.FloatField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    objects = JudgmentQuerySet.as_manager()

    class Meta:
        ordering = ["assignment_id", "question_id"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "question"], name="judgment_once_per_question"),
            models.CheckConstraint(condition=~Q(winner=F("loser")), name="judgment_winner_is_not_loser"),
        ]

    def __str__(self) -> str:
        return f"{self.assignment} {self.question.key}: {self.winner_position}"


def new_invitation_token() -> str:
    """An unguessable token for an expert's invitation link (32 url-safe characters)."""
    import secrets

    return secrets.token_urlsafe(24)


class Invitation(models.Model):
    """A one-person link for an expert who is not on Prolific: /r/<slug>/invite/<token>/.

    One invitation admits one respondent (a unique constraint on Respondent.invitation); opening it
    again resumes that respondent's answers.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="invitations")
    system = models.ForeignKey(
        System,
        on_delete=models.CASCADE,
        related_name="invitations",
        limit_choices_to={"kind": "expert"},
        help_text="The expert system whose answers this person writes.",
    )
    token = models.CharField(max_length=64, default=new_invitation_token, editable=False)
    label = models.CharField(max_length=200, blank=True, help_text="Whom it is for: a name or an email note.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    used_at = models.DateTimeField(null=True, blank=True, help_text="When the link was first opened.")

    class Meta:
        ordering = ["study_id", "-created_at"]
        constraints = [models.UniqueConstraint(fields=["token"], name="invitation_token_unique")]

    def __str__(self) -> str:
        return self.label or f"invitation {self.pk}"


class Respondent(models.Model):
    """A lay person (from Prolific) or an invited expert who writes answers as a human or expert System."""

    class Status(models.TextChoices):
        STARTED = "started", "Started"
        CONSENTED = "consented", "Consented"
        NO_CONSENT = "no-consent", "Did not consent"
        WRITING = "writing", "Writing"
        COMPLETED = "completed", "Completed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="respondents")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="respondents")
    prolific_pid = models.CharField(max_length=64, blank=True, help_text="Blank for invited experts.")
    prolific_study_id = models.CharField(max_length=64, blank=True)
    session_id = models.CharField(max_length=64, blank=True, help_text="Prolific's submission id.")
    invitation = models.ForeignKey(
        Invitation, null=True, blank=True, on_delete=models.RESTRICT, related_name="respondents"
    )
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.STARTED)
    consented_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study_id", "-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "prolific_pid"], condition=~Q(prolific_pid=""), name="respondent_once_per_study"
            ),
            models.UniqueConstraint(
                fields=["invitation"], condition=Q(invitation__isnull=False), name="respondent_once_per_invitation"
            ),
            models.CheckConstraint(
                condition=~Q(prolific_pid="") | Q(invitation__isnull=False), name="respondent_has_pid_or_invitation"
            ),
        ]
        indexes = [
            # Admin and progress: "respondents of this study by status".
            models.Index(fields=["study", "status"], name="respondent_status_idx"),
        ]

    def __str__(self) -> str:
        return self.prolific_pid or str(self.invitation or f"respondent {self.pk}")


class RespondentTask(models.Model):
    """One vignette a respondent is to answer, at a fixed position; `answer` is what they wrote."""

    respondent = models.ForeignKey(Respondent, on_delete=models.CASCADE, related_name="tasks")
    vignette = models.ForeignKey(Vignette, on_delete=models.CASCADE, related_name="respondent_tasks")
    position = models.PositiveSmallIntegerField(help_text="1 for the first writing page, 2 for the second, …")
    answer = models.ForeignKey(Answer, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    assigned_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["respondent_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["respondent", "vignette"], name="respondent_task_vignette_once"),
            models.UniqueConstraint(fields=["respondent", "position"], name="respondent_task_position_unique"),
            models.UniqueConstraint(
                fields=["answer"], condition=Q(answer__isnull=False), name="respondent_task_answer_once"
            ),
        ]
        indexes = [
            # Spreading vignettes: "open (unsubmitted) tasks per vignette, recently assigned".
            models.Index(fields=["vignette", "submitted_at", "assigned_at"], name="respondent_task_open_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.respondent} page {self.position} ({self.vignette.key})"


class ProlificEvent(models.Model):
    """One webhook event from Prolific, kept so that a repeated delivery is recognised and ignored."""

    event_id = models.CharField(
        max_length=128, help_text="Prolific's event id, or a digest of the event when it carries none."
    )
    event_type = models.CharField(max_length=64)
    resource_id = models.CharField(max_length=64, help_text="The submission (or study) the event is about.")
    status = models.CharField(max_length=24, blank=True)
    payload = models.JSONField(default=dict, blank=True)
    received_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-received_at"]
        constraints = [models.UniqueConstraint(fields=["event_id"], name="prolific_event_once")]

    def __str__(self) -> str:
        return f"{self.event_type} {self.resource_id} → {self.status}"
