"""The audit trail in the admin: read only, filterable by study and action (docs/teams.md)."""

from django.contrib import admin

from ..models import AuditEvent
from .teams import TeamScoped


@admin.register(AuditEvent)
class AuditEventAdmin(TeamScoped, admin.ModelAdmin):
    list_display = ["at", "username", "action", "study_slug", "details"]
    list_filter = ["action", "study"]
    search_fields = ["username", "study_slug"]
    date_hierarchy = "at"
    readonly_fields = ["at", "username", "user", "action", "study", "study_slug", "details"]
    fields = tuple(readonly_fields)

    # What happened stays as it happened: nobody adds, changes or deletes an event here.
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
