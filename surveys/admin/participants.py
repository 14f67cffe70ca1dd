"""Judging as it happened: cells, participants with their assignments and judgments, Prolific's events."""

from django.contrib import admin, messages
from django.db.models import Q
from django.utils.html import format_html, format_html_join
from django.utils.timezone import localtime

from ..models import Assignment, Cell, Judgment, Participant, ProlificEvent
from ..services.participation import exclude_by_researcher
from ..services.teams import studies_for
from .bonuses import pay_bonus_to_participants
from .teams import TeamScoped

# The demographics page's answers by key (surveys/forms/judging.py), as a researcher reads them.
DEMOGRAPHIC_LABELS = {
    "gender": "Gender",
    "gender_specify": "Gender, in their words",
    "age": "Age",
    "religion": "Religion",
    "religion_specify": "Religion, in their words",
    "education": "Education",
    "country": "Country of residence",
}


# A participant's pages, shown read-only.
ASSIGNMENT_FIELDS = (
    "position",
    "vignette",
    "first_answer",
    "second_answer",
    "status",
    "counts_toward_cell",
    "shown_at",
    "seconds",
    "completed_at",
)


@admin.register(Cell)
class CellAdmin(TeamScoped, admin.ModelAdmin):
    list_display = ["__str__", "study", "target", "completed", "reserved"]
    list_filter = ["study"]
    list_select_related = ["vignette", "answer_a__system", "answer_b__system", "study"]

    def has_add_permission(self, request):
        return False  # cells come from the comparison plan when a study goes live

    def has_change_permission(self, request, obj=None):
        return False  # their counters are the allocation's, kept by its conditional updates


class AssignmentInline(admin.TabularInline):
    model = Assignment
    extra = 0
    fields = readonly_fields = ASSIGNMENT_FIELDS
    can_delete = False


@admin.register(Participant)
class ParticipantAdmin(TeamScoped, admin.ModelAdmin):
    # Nine columns beside the filters in 1280 px: the study by its slug, the start as a short date and time.
    list_display = [
        "who",
        "study_slug",
        "status",
        "exclusion",
        "first_position_percent",
        "minutes_judging",
        "prolific_status",
        "review_status",
        "started",
    ]
    list_select_related = ["study"]
    list_filter = ["study", "status", "exclusion", "is_preview"]
    search_fields = ["prolific_pid", "session_id"]
    readonly_fields = ["started_at", "finished_at", "consented_at", "quality_flags", "about_them", "judgments_table"]
    inlines = [AssignmentInline]
    actions = ["exclude_by_researcher", pay_bonus_to_participants]

    def has_add_permission(self, request):
        return False  # participants arrive from Prolific

    def get_readonly_fields(self, request, obj=None):
        # A status or exclusion typed in here would leave the cells' counters as they were (an excluded
        # judge's places never reopened): everything is shown, and excluding is the action below.
        # Flags and demographics are stored as JSON: shown once each, in words (quality_flags, about_them).
        fields = [f.name for f in Participant._meta.fields if f.name not in ("id", "flags", "demographics")]
        return [*fields, *(name for name in self.readonly_fields if name not in fields)]

    @admin.action(
        description="Exclude (their judgments leave the analysis, their places reopen)", permissions=["change"]
    )
    def exclude_by_researcher(self, request, queryset):
        reopened = exclude_by_researcher(participants=queryset.select_related("study"), by=request.user)
        self.message_user(
            request,
            f"{queryset.count()} participants excluded by the researcher; {reopened} judging places reopened.",
            messages.SUCCESS,
        )

    @admin.display(description="Prolific PID", ordering="prolific_pid")
    def who(self, participant: Participant) -> str:
        # A researcher's own try (surveys/services/researcher_tries.py) is marked wherever it is listed.
        return f"{participant.prolific_pid} (test)" if participant.is_preview else participant.prolific_pid

    @admin.display(description="First position picked", ordering="first_position_share")
    def first_position_percent(self, participant: Participant) -> str:
        share = participant.first_position_share
        return "–" if share is None else f"{share:.0%}"

    @admin.display(description="Study", ordering="study__slug")
    def study_slug(self, participant: Participant) -> str:
        return participant.study.slug

    @admin.display(description="Started", ordering="started_at")
    def started(self, participant: Participant) -> str:
        return localtime(participant.started_at).strftime("%Y-%m-%d %H:%M")

    @admin.display(description="Minutes judging", ordering="seconds_total")
    def minutes_judging(self, participant: Participant) -> str:
        return f"{participant.seconds_total / 60:.1f}"

    @admin.display(description="Quality flags")
    def quality_flags(self, participant: Participant) -> str:
        if not participant.flags:
            return "None"
        return format_html(
            "<ul>{}</ul>",
            format_html_join(
                "", "<li><strong>{}</strong>: {}</li>", ((f["code"], f["reason"]) for f in participant.flags)
            ),
        )

    @admin.display(description="Demographics")
    def about_them(self, participant: Participant) -> str:
        answers = [
            (DEMOGRAPHIC_LABELS.get(key, key.replace("_", " ").capitalize()), value)
            for key, value in (participant.demographics or {}).items()
            if value not in ("", None)
        ]
        if not answers:
            return "Not given yet"
        rows = format_html_join("", '<tr><th scope="row">{}</th><td>{}</td></tr>', answers)
        return format_html('<table class="mj-demographics"><tbody>{}</tbody></table>', rows)

    @admin.display(description="Judgments (page, question, side picked, winner, seconds on page)")
    def judgments_table(self, participant: Participant) -> str:
        judgments = (
            Judgment.objects.filter(assignment__participant=participant)
            .select_related("assignment", "question", "winner__system")
            .order_by("assignment__position", "question__position")
        )
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    j.assignment.position,
                    j.question.key,
                    j.get_winner_position_display(),
                    j.winner.system,
                    round(j.seconds_on_page),
                )
                for j in judgments
            ),
        )
        return format_html("<table><tbody>{}</tbody></table>", rows) if rows else "None yet"


@admin.register(Judgment)
class JudgmentAdmin(TeamScoped, admin.ModelAdmin):
    study_path = "question__study"
    list_display = ["assignment", "question", "winner", "winner_position", "seconds_on_page", "created_at"]
    list_filter = ["question__study", "question__key", "winner_position"]
    list_select_related = ["assignment__participant", "question", "winner__system", "winner__vignette"]

    # A judgment is what a judge chose: shown, never edited here (its form also listed every answer and
    # assignment in drop-downs, seconds per page on a 600-judge study).
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ProlificEvent)
class ProlificEventAdmin(admin.ModelAdmin):
    """Webhook events as received (read-only): what Prolific told us, and when."""

    list_display = ["received_at", "event_type", "resource_id", "status", "event_id"]
    list_filter = ["event_type", "status"]
    search_fields = ["resource_id", "event_id"]

    def get_queryset(self, request):
        # An event names a submission (a judge's session) or a Prolific study: shown to that study's team.
        events = super().get_queryset(request)
        if request.user.is_superuser:
            return events
        studies = studies_for(request.user)
        sessions = Participant.objects.filter(study__in=studies).values("session_id")
        prolific_ids = studies.exclude(prolific_study_id="").values("prolific_study_id")
        return events.filter(Q(resource_id__in=sessions) | Q(resource_id__in=prolific_ids))

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
