"""Analysis runs in the admin: read-only snapshots, with a link to the dashboard."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from surveys.admin.teams import TeamScoped

from .models import AnalysisRun

# Every field of a run, shown read-only (runs come from refits only).
RUN_FIELDS = (
    "study",
    "dashboard",
    "trigger",
    "status",
    "error",
    "requested_by",
    "created_at",
    "finished_at",
    "n_judgments",
    "n_participants",
    "data_hash",
    "git_revision",
    "parameters",
    "schema_version",
    "systems",
    "halo",
    "results",
)


@admin.register(AnalysisRun)
class AnalysisRunAdmin(TeamScoped, admin.ModelAdmin):
    list_display = ["id", "study", "created_at", "trigger", "status", "n_judgments", "n_participants", "dashboard"]
    list_filter = ["status", "trigger", "study"]
    date_hierarchy = "created_at"
    list_select_related = ["study"]
    fields = readonly_fields = RUN_FIELDS

    def has_add_permission(self, request):
        return False  # runs come from refits only

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="Dashboard")
    def dashboard(self, run):
        if run.status != AnalysisRun.Status.DONE:
            return "–"
        url = reverse("analysis:study", args=[run.study.slug]) + f"?run={run.pk}"
        return format_html('<a href="{}">Open run {}</a>', url, run.pk)
