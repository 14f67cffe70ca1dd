"""Analysis snapshots: one AnalysisRun per refit of a study, holding every question's results.

One row per study refit (not per question): the five questions are fitted on the same snapshot of
valid judgments, so they share one data hash, one parameter set and one git revision, and the
cross-question (halo) correlation belongs to the run as a whole. `results` maps question key to
that question's fit; `halo` holds the correlation matrix of system estimates across questions.
Their shape is analysis.results.shapes, in the version `schema_version` names; read them with
`read_results()`, which upgrades runs stored in an older shape.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from surveys.models import Study

from .results import RunResults, read


class AnalysisRunQuerySet(models.QuerySet):
    def finished(self):
        return self.filter(status=AnalysisRun.Status.DONE)

    def latest_for(self, study):
        """The newest finished run of a study, or None."""
        return self.finished().filter(study=study).order_by("-created_at", "-id").first()


class AnalysisRun(models.Model):
    class Trigger(models.TextChoices):
        NIGHTLY = "nightly", "Nightly (Celery beat)"
        ON_DEMAND = "on-demand", "On demand (dashboard or API)"
        COMMAND = "command", "manage.py refit"

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="analysis_runs")
    trigger = models.CharField(max_length=10, choices=Trigger.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The data snapshot the fit used.
    n_judgments = models.PositiveIntegerField(default=0)
    n_participants = models.PositiveIntegerField(default=0)
    data_hash = models.CharField(
        max_length=64, blank=True, help_text="sha256 over the ids and winners of the valid judgments used."
    )
    parameters = models.JSONField(default=dict, blank=True, help_text="Reference, order effect, bootstrap, style.")
    systems = models.JSONField(
        default=list, blank=True, help_text="The systems at fit time, in item order: key, label, kind."
    )
    results = models.JSONField(default=dict, blank=True, help_text="Per question key: the fit and diagnostics.")
    halo = models.JSONField(
        default=dict, blank=True, help_text="Correlations of system estimates across questions (a halo effect)."
    )
    schema_version = models.PositiveSmallIntegerField(
        default=1, help_text="Shape of systems, results and halo (analysis.results); runs before it are 1."
    )
    git_revision = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)

    objects = AnalysisRunQuerySet.as_manager()

    # Not a field: a refit sets its seconds per phase here, for the log and `manage.py refit` (not stored).
    phase_seconds: dict[str, float]

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status="running") | Q(finished_at__isnull=False), name="analysis_run_finished_has_time"
            ),
        ]
        indexes = [
            # Dashboard and API: "the latest finished run of this study".
            models.Index(fields=["study", "status", "-created_at"], name="analysis_run_latest_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug} run {self.pk} ({self.status}, {self.created_at:%Y-%m-%d %H:%M})"

    def read_results(self) -> RunResults:
        """systems, results and halo as typed dataclasses, whatever version the run was stored in."""
        return read(version=self.schema_version, systems=self.systems, results=self.results, halo=self.halo)


class PowerRun(models.Model):
    """One simulation of the reported test's power at a planned design, with its levers (analysis/power/).

    Simulated by the Celery task `simulate_power` so the power page and API do not wait: `tallies` holds, per
    simulated design point ("v12-r8-n2000": vignettes, judgments per cell, simulated studies), the running
    counts saved after every batch, so a run stopped half way resumes where it stopped and gives the same
    figures. The same design asked again is the same row (`key`): the page reads it instead of simulating."""

    class Status(models.TextChoices):
        SIMULATING = "simulating", "Simulating"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="power_runs")
    key = models.CharField(max_length=64, help_text="sha256 of the design, simulation counts and seed.")
    design = models.JSONField(help_text="The planned design (analysis.power.reported_test.Design) and its counts.")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.SIMULATING)
    tallies = models.JSONField(default=dict, blank=True, help_text="Per design point: the running counts.")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now, help_text="Last saved batch: a stalled run is resumed.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["study", "key"], name="power_run_once_per_design"),
            models.CheckConstraint(
                condition=Q(status="simulating") | Q(finished_at__isnull=False), name="power_run_finished_has_time"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.study.slug} power {self.pk} ({self.status})"

    @property
    def studies_simulated(self) -> int:
        return sum(int(tally.get("studies", 0)) for tally in self.tallies.values())
