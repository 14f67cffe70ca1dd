"""The study page's links ready to copy, the "Try the survey" button, and removing the tries."""

from typing import TYPE_CHECKING

from django.contrib import admin, messages

from ..services.researcher_tries import remove_test_participants, study_links
from ..services.teams import can_act

if TYPE_CHECKING:  # mixed into StudyAdmin: the ModelAdmin methods it calls are StudyAdmin's
    _Base = admin.ModelAdmin
else:
    _Base = object


class StudyLinks(_Base):
    """Mixed into StudyAdmin: the links above the form (templates/surveys/researcher/study_links.html)."""

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        if obj is not None and obj.pk:
            context["study_links"] = study_links(study=obj, absolute=request.build_absolute_uri)
            context["may_act"] = can_act(request.user, obj)  # a viewer is not pointed at the tries' removal
        return super().render_change_form(request, context, add=add, change=change, form_url=form_url, obj=obj)

    @admin.action(description="Remove test participants (researchers' tries)", permissions=["change"])
    def remove_test_participants(self, request, queryset):
        removed = remove_test_participants(studies=queryset)
        self.message_user(
            request,
            f"{removed} test participant{'s' if removed != 1 else ''} removed, with their judgments.",
            messages.SUCCESS,
        )
