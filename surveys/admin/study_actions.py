"""The study admin's status and Prolific review actions: go live, close, copy as a draft, review, reconcile."""

from typing import TYPE_CHECKING

from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils.html import format_html

from ..models import Study, StudyMembership
from ..prolific import ProlificError, reconcile_study
from ..services.freezing import copy_as_draft
from ..services.lifecycle import close_study, go_live, launch_warnings, lone_answers
from ..services.teams import set_member
from .prolific_actions import review_then_say

if TYPE_CHECKING:  # mixed into StudyAdmin: the ModelAdmin methods it calls are StudyAdmin's
    _Base = admin.ModelAdmin
else:
    _Base = object


class StudyActions(_Base):
    """Mixed into StudyAdmin: the actions it lists by name (each done study by study, each outcome said)."""

    @admin.action(
        description="Go live (checks that every system × vignette has a selected answer)", permissions=["change"]
    )
    def make_live(self, request, queryset):
        lone = {study.pk: lone_answers(study) for study in queryset.filter(status=Study.Status.DRAFT)}
        self._change_status(request, queryset, go_live, "is live")
        for study in queryset.filter(status=Study.Status.LIVE):
            if lone.get(study.pk):  # selected by going live: there was only one answer to choose
                cells = ", ".join(f"{a.system.key} × {a.vignette.key}" for a in lone[study.pk])
                self.message_user(
                    request,
                    f"Study '{study.slug}': the only answer of {len(lone[study.pk])} system × vignette "
                    f"was selected for judging ({cells}).",
                    messages.INFO,
                )
            for warning in launch_warnings(study):
                self.message_user(request, f"Study '{study.slug}': {warning}.", messages.WARNING)

    @admin.action(description="Close", permissions=["change"])
    def make_closed(self, request, queryset):
        self._change_status(request, queryset, close_study, "is closed")

    @admin.action(description="Copy as a new draft (questions, vignettes, systems, answers)", permissions=["add"])
    def copy_as_new_draft(self, request, queryset):
        for study in queryset:
            copy = copy_as_draft(study=study)
            set_member(study=copy, user=request.user, role=StudyMembership.Role.OWNER, by=request.user)
            self.log_addition(request, copy, [{"added": {}}])
            link = reverse("admin:surveys_study_change", args=[copy.pk])
            self.message_user(
                request,
                format_html("Study '{}' copied as the draft <a href=\"{}\">{}</a>.", study.slug, link, copy.slug),
                messages.SUCCESS,
            )

    @admin.action(
        description="Review submissions on Prolific (approve valid, handle invalid by policy)",
        permissions=["change"],
    )
    def review_on_prolific(self, request, queryset):
        # A page of who is approved, rejected or asked to return, and what it pays, before anything is sent.
        return review_then_say(self, request, queryset)

    @admin.action(description="Reconcile with Prolific now", permissions=["change"])
    def reconcile_with_prolific(self, request, queryset):
        for study in queryset:
            try:
                result = reconcile_study(study=study)
            except ProlificError as exc:
                self.message_user(request, f"Study '{study.slug}': {exc}", messages.ERROR)
            except ValidationError as exc:  # not this study's Prolific study (surveys/prolific/ownership.py)
                self.message_user(request, " ".join(exc.messages), messages.ERROR)
            else:
                self.message_user(request, str(result), messages.SUCCESS)

    def _change_status(self, request, queryset, change, done: str) -> None:
        for study in queryset:
            try:
                change(study=study, by=request.user)
            except ValidationError as exc:
                self.message_user(request, " ".join(exc.messages), messages.ERROR)
            else:
                self.log_change(request, study, f"Study {done}.")  # who and when, in the study's history
                self.message_user(request, f"Study '{study.slug}' {done}.", messages.SUCCESS)
