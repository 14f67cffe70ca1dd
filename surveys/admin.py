"""The researcher's admin: studies with their parts inline, answers side by side, status changes."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from .allocation import release_participant
from .answers import FeatureIn, feature_errors, select_answer
from .lifecycle import close_study, go_live, launch_warnings, missing_for_live
from .models import (
    Answer,
    Assignment,
    Cell,
    Feature,
    Invitation,
    Judgment,
    Participant,
    ProlificEvent,
    Question,
    Respondent,
    RespondentTask,
    Study,
    System,
    Vignette,
)
from .prolific import POLICY_HELP, ProlificError, reconcile_study, review_submissions
from .respondents import invitation_errors


class QuestionInline(admin.TabularInline):
    model = Question
    extra = 0
    fields = ["position", "key", "text"]


class VignetteInline(admin.StackedInline):
    model = Vignette
    extra = 0
    fields = [("position", "key", "character"), "source", "text"]
    show_change_link = True


class SystemInline(admin.TabularInline):
    model = System
    extra = 0
    fields = ["position", "key", "label", "kind", "provider", "model", "base_url", "api_key_env", "parameters"]

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        # Nine columns side by side: compact widgets keep the row within the page.
        compact = {
            "position": forms.NumberInput(attrs={"style": "width:4em"}),
            **{name: forms.TextInput(attrs={"size": 14}) for name in ["key", "label", "model", "api_key_env"]},
            "base_url": forms.URLInput(attrs={"size": 24}),
            "parameters": forms.Textarea(attrs={"rows": 2, "cols": 24}),
        }
        if db_field.name in compact:
            kwargs["widget"] = compact[db_field.name]
        if db_field.name == "base_url":
            kwargs["assume_scheme"] = "https"  # Django 6's default; a bare host gets https, not http
        return super().formfield_for_dbfield(db_field, request, **kwargs)


class StudyForm(forms.ModelForm):
    """The admin builds the Meta from the fieldsets; this adds the attention options' check."""

    ATTENTION_HELP = (
        'Two options as a JSON list, e.g. ["I read the answers quickly", "I read the answers carefully"]; '
        "the correct choice is the second. Empty ([]): these two."
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "attention_options" in self.fields:
            self.fields["attention_options"].help_text = self.ATTENTION_HELP

    def clean_attention_options(self):
        # Anything but [] or two texts would silently show judges the default options instead.
        options = self.cleaned_data["attention_options"]
        if options in ([], None):
            return []
        two_texts = isinstance(options, list) and len(options) == 2
        if not (two_texts and all(isinstance(o, str) and o.strip() for o in options)):
            raise ValidationError('Give exactly two options as a JSON list of texts, e.g. ["No", "Yes"], or [].')
        return options


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    form = StudyForm
    list_display = ["name", "slug", "status", "reference_system", "repetitions", "vignettes_per_participant"]
    list_filter = ["status"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = ["status", "went_live_at", "closed_at", "readiness", "answers_link"]
    inlines = [QuestionInline, VignetteInline, SystemInline]
    actions = ["make_live", "make_closed", "review_on_prolific", "reconcile_with_prolific"]
    fieldsets = [
        (None, {"fields": ["name", "slug", "description", "status", "readiness", "answers_link", "reference_system"]}),
        (
            "Design",
            {
                "fields": [
                    "repetitions",
                    "vignettes_per_participant",
                    "order_rule",
                    "answers_per_respondent",
                    "reservation_minutes",
                ]
            },
        ),
        (
            "Quality and Prolific policy",
            {
                "description": POLICY_HELP,
                "fields": [
                    "minimum_seconds",
                    "fast_fraction_of_median",
                    "estimated_minutes",
                    "attention_prompt",
                    "attention_options",
                    "invalid_policy",
                    "prolific_study_id",
                    "completion_code",
                    "failed_attention_code",
                    "no_consent_code",
                    "screened_out_code",
                ],
            },
        ),
        ("LLM instrument", {"classes": ["collapse"], "fields": ["system_prompt", "user_prompt"]}),
        ("History", {"classes": ["collapse"], "fields": ["went_live_at", "closed_at"]}),
    ]

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        if "reference_system" in form.base_fields:
            systems = System.objects.filter(study=obj) if obj else System.objects.none()
            form.base_fields["reference_system"].queryset = systems
        return form

    @admin.display(description="Ready to go live?")
    def readiness(self, study: Study) -> str:
        if study.pk is None or study.status != Study.Status.DRAFT:
            return "—"
        problems = missing_for_live(study)
        notes = "".join(f" Note: {warning}." for warning in launch_warnings(study))
        return ("Yes." if not problems else "Missing: " + "; ".join(problems) + ".") + notes

    @admin.display(description="Answers")
    def answers_link(self, study: Study) -> str:
        if study.pk is None:
            return "—"
        return format_html(
            '<a href="{}">All answers, side by side per vignette</a> · <a href="{}">Collect LLM answers</a>'
            ' · <a href="{}">Dashboard</a>',
            reverse("admin:surveys_study_answers", args=[study.pk]),
            # By URL name: surveys does not import llm_collect or analysis.
            reverse("admin:llm_collect_collectionrun_start") + f"?study={study.pk}",
            reverse("analysis:study", args=[study.slug]),
        )

    @admin.action(description="Go live (checks that every system × vignette has a selected answer)")
    def make_live(self, request, queryset):
        self._change_status(request, queryset, go_live, "is live")
        for study in queryset.filter(status=Study.Status.LIVE):
            for warning in launch_warnings(study):
                self.message_user(request, f"Study '{study.slug}': {warning}.", messages.WARNING)

    @admin.action(description="Close")
    def make_closed(self, request, queryset):
        self._change_status(request, queryset, close_study, "is closed")

    @admin.action(
        description="Review submissions on Prolific (approve valid, handle invalid by policy)",
        permissions=["change"],
    )
    def review_on_prolific(self, request, queryset):
        for study in queryset:
            report = review_submissions(study=study, user=request.user)
            acted = report.calls or report.failed
            for line in report.messages:
                self.message_user(request, line, messages.WARNING if report.failed or not acted else messages.INFO)
            if not acted:
                continue  # refused before any call (no study id, no token, nothing to review): no "0 approved"
            summary = (
                f"Study '{study.slug}': {report.approved} approved, {report.rejected} rejected, "
                f"{report.returns_requested} asked to return, {report.failed} failed."
            )
            self.message_user(request, summary, messages.ERROR if report.failed else messages.SUCCESS)

    @admin.action(description="Reconcile with Prolific now", permissions=["change"])
    def reconcile_with_prolific(self, request, queryset):
        for study in queryset:
            try:
                result = reconcile_study(study=study)
            except ProlificError as exc:
                self.message_user(request, f"Study '{study.slug}': {exc}", messages.ERROR)
            else:
                self.message_user(request, str(result), messages.SUCCESS)

    def _change_status(self, request, queryset, change, done: str) -> None:
        for study in queryset:
            try:
                change(study=study)
            except ValidationError as exc:
                self.message_user(request, " ".join(exc.messages), messages.ERROR)
            else:
                self.message_user(request, f"Study '{study.slug}' {done}.", messages.SUCCESS)

    def get_urls(self):
        own = [
            path(
                "<int:study_id>/answers/",
                self.admin_site.admin_view(self.answers_view),
                name="surveys_study_answers",
            ),
            path(
                "<int:study_id>/answers/<int:answer_id>/select/",
                self.admin_site.admin_view(self.select_view),
                name="surveys_study_select_answer",
            ),
        ]
        return own + super().get_urls()

    def answers_view(self, request, study_id: int):
        """Every system's answers to each vignette side by side, with the selected one marked."""
        study = get_object_or_404(Study, pk=study_id)
        if not self.has_view_permission(request, study):
            raise PermissionDenied
        systems = list(study.systems.all())
        answers = (
            Answer.objects.for_study(study)
            .select_related("system", "vignette", "selected_by")
            .prefetch_related("features")
        )
        grid: dict[int, dict[int, list[Answer]]] = {}
        for answer in answers:
            grid.setdefault(answer.vignette_id, {}).setdefault(answer.system_id, []).append(answer)
        rows = [
            {"vignette": v, "columns": [{"system": s, "answers": grid.get(v.pk, {}).get(s.pk, [])} for s in systems]}
            for v in study.vignettes.all()
        ]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "study": study,
            "systems": systems,
            "rows": rows,
            "title": f"Answers of {study.name}",
            "can_select": study.status == Study.Status.DRAFT and self.has_change_permission(request, study),
        }
        return TemplateResponse(request, "admin/surveys/study_answers.html", context)

    def select_view(self, request, study_id: int, answer_id: int):
        answer = get_object_or_404(Answer, pk=answer_id, vignette__study_id=study_id)
        if request.method != "POST" or not self.has_change_permission(request, answer.vignette.study):
            return redirect("admin:surveys_study_answers", study_id)
        try:
            select_answer(answer=answer, user=request.user)
        except ValidationError as exc:
            self.message_user(request, " ".join(exc.messages), messages.ERROR)
        else:
            self.message_user(request, f"Selected {answer} for judging.", messages.SUCCESS)
        return redirect(reverse("admin:surveys_study_answers", args=[study_id]) + f"#vignette-{answer.vignette_id}")


class FeatureFormSet(forms.BaseInlineFormSet):
    def clean(self):
        # The features as a whole obey the answer rules (weights sum to 100, at most five): an error on the
        # page, before anything is written, rather than a server error while saving.
        super().clean()
        features = [
            FeatureIn(feature=f.cleaned_data.get("feature") or "", weight=f.cleaned_data.get("weight") or 0)
            for f in self.forms
            if f.cleaned_data and not f.cleaned_data.get("DELETE")
        ]
        errors = feature_errors(features)
        if errors:
            raise ValidationError([error[0].upper() + error[1:] + "." for error in errors])


class FeatureInline(admin.TabularInline):
    model = Feature
    formset = FeatureFormSet
    extra = 0
    fields = ["position", "feature", "weight", "reason"]

    def _frozen(self, answer) -> bool:
        return answer is not None and answer.vignette.study.status != Study.Status.DRAFT

    def has_add_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_delete_permission(request, obj)


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["__str__", "system", "vignette", "sample", "selected", "origin", "selected_by", "selected_at"]
    list_filter = ["vignette__study", "system__kind", "selected", "origin"]
    search_fields = ["action", "system__key", "vignette__key"]
    readonly_fields = ["selected", "selected_by", "selected_at", "created_at"]
    inlines = [FeatureInline]
    list_select_related = ["system", "vignette", "selected_by"]

    def has_change_permission(self, request, obj=None):
        # Once a study has gone live, judges have seen its answers: they stay as they were.
        if obj is not None and obj.vignette.study.status != Study.Status.DRAFT:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.vignette.study.status != Study.Status.DRAFT:
            return False
        return super().has_delete_permission(request, obj)


@admin.register(Cell)
class CellAdmin(admin.ModelAdmin):
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
    fields = [
        "position",
        "vignette",
        "first_answer",
        "second_answer",
        "status",
        "counts_toward_cell",
        "shown_at",
        "seconds",
        "completed_at",
    ]
    readonly_fields = fields
    can_delete = False


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = [
        "prolific_pid",
        "study",
        "status",
        "exclusion",
        "first_position_share",
        "minutes_judging",
        "prolific_status",
        "review_status",
        "started_at",
    ]
    list_filter = ["study", "status", "exclusion", "is_preview"]
    search_fields = ["prolific_pid", "session_id"]
    readonly_fields = ["started_at", "finished_at", "consented_at", "quality_flags", "judgments_table"]
    inlines = [AssignmentInline]
    actions = ["exclude_by_researcher"]

    def has_add_permission(self, request):
        return False  # participants arrive from Prolific

    def get_readonly_fields(self, request, obj=None):
        # A status or exclusion typed in here would leave the cells' counters as they were (an excluded
        # judge's places never reopened): everything is shown, and excluding is the action below.
        fields = [f.name for f in Participant._meta.fields if f.name != "id"]
        return [*fields, *(name for name in self.readonly_fields if name not in fields)]

    @admin.action(
        description="Exclude (their judgments leave the analysis, their places reopen)", permissions=["change"]
    )
    def exclude_by_researcher(self, request, queryset):
        reopened = sum(
            release_participant(participant=participant, exclusion=Participant.Exclusion.RESEARCHER)
            for participant in queryset
        )
        self.message_user(
            request,
            f"{queryset.count()} participants excluded by the researcher; {reopened} judging places reopened.",
            messages.SUCCESS,
        )

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
class JudgmentAdmin(admin.ModelAdmin):
    list_display = ["assignment", "question", "winner", "winner_position", "seconds_on_page", "created_at"]
    list_filter = ["question__study", "question__key", "winner_position"]
    list_select_related = ["assignment__participant", "question", "winner__system", "winner__vignette"]

    # A judgment is what a judge chose: shown, never edited here (its form also listed every answer and
    # assignment in drop-downs, seconds per page on a 600-judge study).
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


# The answer-writing survey: invitations for experts, and the respondents with their pages.


class InvitationForm(forms.ModelForm):
    class Meta:
        model = Invitation
        fields = ["study", "system", "label"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "system" in self.fields:
            # Every study may have a "Philosopher": say whose each one is.
            self.fields["system"].queryset = self.fields["system"].queryset.select_related("study")
            self.fields["system"].label_from_instance = lambda system: f"{system} ({system.study.slug})"

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("study") and cleaned.get("system"):
            for error in invitation_errors(study=cleaned["study"], system=cleaned["system"]):
                self.add_error("system", error.capitalize() + ".")
        return cleaned


def _invitation_link(request, invitation: Invitation) -> str:
    url = request.build_absolute_uri(
        reverse("surveys:answering-invitation", args=[invitation.study.slug, invitation.token])
    )
    return format_html(
        '<input type="text" readonly value="{}" size="48" aria-label="Invitation link" onfocus="this.select()">', url
    )


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    form = InvitationForm
    list_filter = ["study", "used_at"]
    search_fields = ["label", "token"]
    list_select_related = ["study", "system", "created_by"]

    @staticmethod
    def _link_column(request):
        """The invitation's full link on this host, as a column or read-only field (one per request)."""
        if not hasattr(request, "_invitation_link_column"):

            def link(invitation):
                return _invitation_link(request, invitation)

            link.short_description = "Link to send (select and copy)"
            request._invitation_link_column = link
        return request._invitation_link_column

    def get_list_display(self, request):
        return ["__str__", "study", "system", self._link_column(request), "used", "created_by", "created_at"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["study", "system", "label"]
        return ["study", "system", "label", self._link_column(request), "used", "created_by", "created_at"]

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return []
        return ["study", "system", self._link_column(request), "used", "created_by", "created_at"]

    @admin.display(description="Used?")
    def used(self, invitation: Invitation) -> str:
        if invitation.used_at is None:
            return "Not yet"
        return f"Opened {invitation.used_at:%Y-%m-%d %H:%M}"

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


class RespondentTaskInline(admin.TabularInline):
    model = RespondentTask
    extra = 0
    fields = ["position", "vignette", "answer", "action", "started_at", "submitted_at"]
    readonly_fields = fields
    can_delete = False

    @admin.display(description="Action written")
    def action(self, task: RespondentTask) -> str:
        return task.answer.action if task.answer_id else "—"

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Respondent)
class RespondentAdmin(admin.ModelAdmin):
    list_display = ["__str__", "study", "system", "status", "pages", "started_at", "finished_at"]
    list_filter = ["study", "status", "system__kind"]
    search_fields = ["prolific_pid", "session_id", "invitation__label"]
    list_select_related = ["study", "system", "invitation"]
    readonly_fields = [
        "study",
        "system",
        "prolific_pid",
        "prolific_study_id",
        "session_id",
        "invitation",
        "status",
        "consented_at",
        "started_at",
        "finished_at",
    ]
    inlines = [RespondentTaskInline]

    def get_queryset(self, request):
        pages_done = Count("tasks", filter=Q(tasks__submitted_at__isnull=False))
        return super().get_queryset(request).annotate(pages_done=pages_done, pages_total=Count("tasks"))

    @admin.display(description="Pages written")
    def pages(self, respondent: Respondent) -> str:
        return f"{respondent.pages_done} / {respondent.pages_total}"

    def has_add_permission(self, request):
        return False  # respondents come from the survey links

    def changelist_view(self, request, extra_context=None):
        # The link to paste into Prolific for each study's lay answers (experts get invitations).
        query = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
        studies = Study.objects.exclude(status=Study.Status.CLOSED).filter(systems__kind=System.Kind.HUMAN).distinct()
        links = [
            (study, request.build_absolute_uri(reverse("surveys:answering-entry", args=[study.slug])) + query)
            for study in studies
        ]
        return super().changelist_view(request, {**(extra_context or {}), "answering_links": links})


@admin.register(ProlificEvent)
class ProlificEventAdmin(admin.ModelAdmin):
    """Webhook events as received (read-only): what Prolific told us, and when."""

    list_display = ["received_at", "event_type", "resource_id", "status", "event_id"]
    list_filter = ["event_type", "status"]
    search_fields = ["resource_id", "event_id"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


# The admin's "View site" link leads researchers to their results.
admin.site.site_header = "MoralJudge administration"
admin.site.site_title = "MoralJudge"
admin.site.site_url = "/dashboard/"
