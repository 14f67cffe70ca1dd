"""The answer-writing survey: invitations for experts, and the respondents with their pages."""

from typing import TYPE_CHECKING, TypedDict

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, Q
from django.urls import reverse
from django.utils.html import format_html

from ..models import Invitation, Respondent, RespondentTask, Study, System
from ..prolific.writer_returns import ask_writers_to_return
from ..services.invitations import reissue_invitation, revoke_invitation, state
from ..services.respondent_survey import invitation_errors
from ..services.teams import studies_for
from .teams import TeamScoped

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class PagesCounted(TypedDict):  # RespondentAdmin.get_queryset's counts
    pages_done: int
    pages_total: int


class InvitationForm(forms.ModelForm):
    class Meta:
        model = Invitation
        fields = ["study", "system", "label"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "system" in self.fields:
            # Every study may have a "Philosopher": say whose each one is.
            system_field = self.fields["system"]
            assert isinstance(system_field, forms.ModelChoiceField)
            assert system_field.queryset is not None  # a foreign key's field: its model's rows
            system_field.queryset = system_field.queryset.select_related("study")
            system_field.label_from_instance = lambda system: f"{system} ({system.study.slug})"  # type: ignore[method-assign, assignment]  # Django's per-field label hook

    def clean(self):
        cleaned = super().clean()
        assert cleaned is not None  # ModelForm.clean returns the cleaned data
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
class InvitationAdmin(TeamScoped, admin.ModelAdmin):
    form = InvitationForm
    list_filter = ["study", "used_at"]
    search_fields = ["label", "token"]
    list_select_related = ["study", "system", "created_by"]
    actions = ["revoke", "revoke_and_reissue"]

    @staticmethod
    def _link_column(request):
        """The invitation's full link on this host, as a column or read-only field (one per request)."""
        if not hasattr(request, "_invitation_link_column"):

            @admin.display(description="Link to send (select and copy)")
            def link(invitation):
                return _invitation_link(request, invitation)

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
        return state(invitation)

    @admin.action(
        description="Revoke (the link stops working, also in the browser that opened it)", permissions=["change"]
    )
    def revoke(self, request, queryset):
        for invitation in queryset:
            revoke_invitation(invitation=invitation)
        self.message_user(request, f"Revoked {len(queryset)} invitation(s).", messages.SUCCESS)

    @admin.action(
        description="Revoke and reissue (a new link; the expert's pages so far move to it)", permissions=["change"]
    )
    def revoke_and_reissue(self, request, queryset):
        for invitation in queryset.filter(revoked_at__isnull=True):
            fresh = reissue_invitation(invitation=invitation, created_by=request.user)
            self.message_user(
                request,
                format_html('Reissued "{}": send the new link {}', fresh, _invitation_link(request, fresh)),
                messages.SUCCESS,
            )

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


TASK_FIELDS = (
    "position",
    "vignette",
    "answer",
    "action",
    "authenticity",
    "started_at",
    "submitted_at",
)  # all read-only


class RespondentTaskInline(admin.TabularInline):
    model = RespondentTask
    extra = 0
    fields = readonly_fields = TASK_FIELDS
    can_delete = False

    @admin.display(description="Action written")
    def action(self, task: RespondentTask) -> str:
        return task.answer.action if task.answer is not None else "—"

    @admin.display(description="Authenticity")
    def authenticity(self, task: RespondentTask) -> str:
        return task.answer.get_authenticity_display() if task.answer is not None and task.answer.authenticity else "—"

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Respondent)
class RespondentAdmin(TeamScoped, admin.ModelAdmin):
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
        "return_requested_at",
        "return_request",
    ]
    inlines = [RespondentTaskInline]
    actions = ["ask_to_return"]

    @admin.action(
        description="Ask low-authenticity writers to return their submission on Prolific (study's policy)",
        permissions=["change"],
    )
    def ask_to_return(self, request, queryset):
        for line in ask_writers_to_return(respondents=queryset, user=request.user):
            self.message_user(request, line, messages.WARNING if "refused" in line else messages.INFO)

    def get_queryset(self, request):
        pages_done = Count("tasks", filter=Q(tasks__submitted_at__isnull=False))
        return super().get_queryset(request).annotate(pages_done=pages_done, pages_total=Count("tasks"))

    @admin.display(description="Pages written")
    def pages(self, respondent: "WithAnnotations[Respondent, PagesCounted]") -> str:
        return f"{respondent.pages_done} / {respondent.pages_total}"

    def has_add_permission(self, request):
        return False  # respondents come from the survey links

    def changelist_view(self, request, extra_context=None):
        # The link to paste into Prolific for each study's lay answers (experts get invitations).
        query = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
        studies = (
            studies_for(request.user)
            .exclude(status=Study.Status.CLOSED)
            .filter(systems__kind=System.Kind.HUMAN)
            .distinct()
        )
        links = [
            (study, request.build_absolute_uri(reverse("surveys:answering-entry", args=[study.slug])) + query)
            for study in studies
        ]
        return super().changelist_view(request, {**(extra_context or {}), "answering_links": links})
