"""The judging survey as it happens: cells to fill, participants, their assignments and judgments."""

from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from .answers import Answer
from .study import Study
from .study_parts import Question, Vignette

# A cell has room while completed < target - reserved: the rule's one spelling. The ORM filters with it
# (`Cell.objects.with_room()`) and the hand-written statements compile it (`cell_room_sql`).
CELL_HAS_ROOM = Q(completed__lt=F("target") - F("reserved"))


class CellQuerySet(models.QuerySet):
    def with_room(self):
        return self.filter(CELL_HAS_ROOM)


def cell_room_sql(connection, alias: str | None = None) -> str:
    """CELL_HAS_ROOM as SQL for `connection`, its columns qualified by `alias` (default: the table's name)."""
    query = Cell.objects.filter(CELL_HAS_ROOM).query
    compiler = query.get_compiler(connection=connection)
    sql, params = query.where.as_sql(compiler, connection)
    assert not params  # columns only: safe to embed in a composed statement
    table = connection.ops.quote_name(Cell._meta.db_table)
    return sql.replace(f"{table}.", f"{alias}." if alias else f"{table}.")


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

    objects = CellQuerySet.as_manager()

    class Meta:
        ordering = ["study_id", "vignette_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["vignette", "answer_a", "answer_b"],
                name="cell_pair_unique_per_vignette",
                violation_error_message="This vignette already has a cell for these two answers.",
            ),
            models.CheckConstraint(
                condition=Q(completed__lte=F("target") - F("reserved")),
                name="cell_never_overfilled",
                violation_error_message="A cell's completed and reserved places cannot together exceed its target.",
            ),
            models.CheckConstraint(
                condition=~Q(answer_a=F("answer_b")),
                name="cell_two_different_answers",
                violation_error_message="A cell compares two different answers (answer A and answer B).",
            ),
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


class ParticipantQuerySet(models.QuerySet):
    def of_study(self, slug: str):
        """The participants of the study `slug`, each with their study (a judging page's first read)."""
        return self.filter(study__slug=slug).select_related("study")

    def locked(self):
        """Locked until the transaction ends: the participant's row only, their study's stays free."""
        return self.select_for_update(of=("self",))


class Participant(models.Model):
    """A judge who arrived from Prolific (or a researcher previewing): one person in one Prolific session.

    Keyed on study × PROLIFIC_PID × SESSION_ID: resuming needs both ids, and while one session of a
    PID is open (not returned or timed out on Prolific) no other session of that PID can start.
    """

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
        UNVERIFIED = "unverified", "No Prolific submission"

    class Exclusion(models.TextChoices):
        NONE = "", "Not excluded"
        NO_ANONYMISED_CONSENT = "no-anonymised-consent", "No consent to anonymised data use"
        FAILED_ATTENTION = "failed-attention", "Failed the attention check"
        STRAIGHT_LINING = "straight-lining", "Only the first or only the second option throughout"
        TOO_FAST = "too-fast", "Exceptionally fast"
        RETURNED = "returned", "Returned or timed out"
        RESEARCHER = "researcher", "Excluded by the researcher"
        NO_SUBMISSION = "no-prolific-submission", "No Prolific submission"

    class ProlificStatus(models.TextChoices):
        """A submission's status on Prolific, as the API and webhooks spell it."""

        NONE = "", "Not heard from Prolific"
        RESERVED = "RESERVED", "Reserved"
        ACTIVE = "ACTIVE", "Active"
        AWAITING_REVIEW = "AWAITING REVIEW", "Awaiting review"
        APPROVED = "APPROVED", "Approved"
        PARTIALLY_APPROVED = "PARTIALLY APPROVED", "Partially approved"
        REJECTED = "REJECTED", "Rejected"
        RETURNED = "RETURNED", "Returned"
        TIMED_OUT = "TIMED-OUT", "Timed out"
        SCREENED_OUT = "SCREENED OUT", "Screened out"

    class ReviewStatus(models.TextChoices):
        """What we told Prolific about a submission."""

        NOT_REVIEWED = "", "Not reviewed"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"
        RETURN_REQUESTED = "return-requested", "Asked to return"

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
    # A webhook with a status not listed here is refused; reconciliation stores what Prolific's API lists.
    prolific_status = models.CharField(max_length=24, choices=ProlificStatus.choices, blank=True)
    prolific_status_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When Prolific sent the status event applied last (X-Timestamp): an older event is not applied.",
    )
    review_status = models.CharField(
        max_length=24,
        choices=ReviewStatus.choices,
        blank=True,
        help_text="What we told Prolific: approved, rejected, …",
    )
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = ParticipantQuerySet.as_manager()

    class Meta:
        ordering = ["study_id", "-started_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "prolific_pid", "session_id"],
                name="participant_once_per_session",
                violation_error_message="This Prolific participant (PROLIFIC_PID) already entered this study in this session (SESSION_ID).",
            ),
            # One open session per person: a new SESSION_ID only once Prolific ended the earlier one.
            models.UniqueConstraint(
                fields=["study", "prolific_pid"],
                condition=~Q(status__in=["returned", "timed-out"]),
                name="participant_one_open_session",
                violation_error_message="This Prolific participant (PROLIFIC_PID) already has an open session of this study.",
            ),
            models.UniqueConstraint(
                fields=["session_id"],
                condition=~Q(session_id=""),
                name="participant_session_unique",
                violation_error_message="This Prolific session (SESSION_ID) already belongs to another participant.",
            ),
        ]
        indexes = [
            # Reopening cells and progress counts: "participants of this study by status".
            models.Index(fields=["study", "status"], name="participant_status_idx"),
            # The "too fast" median (services/timing.py): finished participants' times, in order.
            models.Index(
                fields=["study", "seconds_total"],
                condition=Q(is_preview=False, status__in=["completed", "failed-attention"]),
                name="participant_finished_secs_idx",
            ),
        ]

    def __str__(self) -> str:
        return self.prolific_pid


def _counted_page(prefix: str = "") -> dict:
    """The conditions for a page's judgments to enter the analysis, as filters from `prefix`'s model."""
    return {
        f"{prefix}status": Assignment.Status.COMPLETED,
        f"{prefix}participant__status": Participant.Status.COMPLETED,
        f"{prefix}participant__exclusion": "",
        f"{prefix}participant__is_preview": False,
    }


class AssignmentQuerySet(models.QuerySet):
    def pages_of(self, participant_id: int, slug: str):
        """A participant's pages of the study `slug`, each with the participant and study (one statement).

        Unordered: the caller sorts the few pages by position (an ORDER BY cost more to compile than to sort).
        """
        return (
            self.filter(participant_id=participant_id, participant__study__slug=slug)
            .select_related("participant__study")
            .order_by()
        )

    def valid(self):
        """Pages whose judgments enter the analysis (Judgment.objects.valid() is their judgments)."""
        return self.filter(**_counted_page())


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
                fields=["participant", "vignette"],
                name="assignment_vignette_once_per_participant",
                violation_error_message="This participant already has a page with this vignette.",
            ),
            models.UniqueConstraint(
                fields=["participant", "position"],
                name="assignment_position_unique",
                violation_error_message="This participant already has a page at this position.",
            ),
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
        return self.filter(**_counted_page("assignment__"))

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
            models.UniqueConstraint(
                fields=["assignment", "question"],
                name="judgment_once_per_question",
                violation_error_message="This page already has a judgment on this question.",
            ),
            models.CheckConstraint(
                condition=~Q(winner=F("loser")),
                name="judgment_winner_is_not_loser",
                violation_error_message="The winner and the loser of a judgment are two different answers.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.assignment} {self.question.key}: {self.winner_position}"
