"""The study page's team box and its "Invite a colleague" page (surveys/services/team_invitations.py)."""

from typing import TYPE_CHECKING

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path

from ..models import StudyMembership
from ..services.team_invitations import invite_colleague, mail_is_configured
from ..services.teams import can_change_team

if TYPE_CHECKING:  # mixed into StudyAdmin: the ModelAdmin methods it calls are StudyAdmin's
    _Base = admin.ModelAdmin
else:
    _Base = object


class InviteForm(forms.Form):
    who = forms.CharField(
        label="Colleague",
        max_length=150,
        help_text="Their username, or their e-mail address (an account is made for a new address).",
    )
    role = forms.ChoiceField(choices=StudyMembership.Role.choices, initial=StudyMembership.Role.VIEWER)


class StudyTeamPage(_Base):
    """Mixed into StudyAdmin: admin:surveys_study_invite and the team above the study's form."""

    def get_urls(self):
        own = [
            path(
                "<int:study_id>/team/invite/",
                self.admin_site.admin_view(self.invite_view),
                name="surveys_study_invite",
            )
        ]
        return own + super().get_urls()

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.pk:
            context["study_team"] = obj.memberships.select_related("user").order_by("role", "user__username")
            context["may_invite"] = self._may_invite(request, obj)
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

    def _may_invite(self, request, study) -> bool:
        # An owner of the study, holding the model permission to change studies (as every action asks).
        return can_change_team(request.user, study) and self.has_change_permission(request, study)

    def invite_view(self, request, study_id: int):
        study = get_object_or_404(self.get_queryset(request), pk=study_id)  # another team's study: 404
        if not self._may_invite(request, study):
            raise PermissionDenied
        form = InviteForm(request.POST or None)
        invitation = None
        if form.is_valid():
            try:
                invitation = invite_colleague(
                    study=study, by=request.user, site_url=request.build_absolute_uri("/"), **form.cleaned_data
                )
            except ValidationError as exc:
                form.add_error("who", exc)
            else:
                name, role = invitation.user.get_username(), invitation.role
                sent = f" An e-mail with the link went to {invitation.mailed_to}." if invitation.mailed_to else ""
                self.message_user(request, f"On the team as {role}: {name}.{sent}", messages.SUCCESS)
                form = InviteForm()
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "study": study,
            "form": form,
            "invitation": invitation,
            "mail_configured": mail_is_configured(),
            "team": study.memberships.select_related("user").order_by("role", "user__username"),
            "title": f"Invite a colleague to {study.name}",
        }
        return TemplateResponse(request, "admin/surveys/invite.html", context)
