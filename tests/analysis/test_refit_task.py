"""The refit tasks, the `refit` command and the nightly beat entry."""

import re
from datetime import timedelta
from io import StringIO

import pytest
import time_machine
from django.conf import settings
from django.core.management import CommandError, call_command
from django.utils import timezone

from analysis import tasks
from analysis.models import AnalysisRun
from surveys.services.lifecycle import close_study

from ..conftest import make_judged_study, make_study

FAST = {"bootstrap": 50, "split_halves": 10}


@pytest.fixture
def judged(db):
    return make_judged_study(participants=40, seed=3)


def test_running_the_task_twice_stores_two_snapshots_of_the_same_data(judged):
    first = tasks.refit_study(judged.pk, AnalysisRun.Trigger.ON_DEMAND)
    second = tasks.refit_study(judged.pk, AnalysisRun.Trigger.ON_DEMAND)
    runs = AnalysisRun.objects.filter(study=judged).order_by("id")
    assert [run.pk for run in runs] == [first, second]
    assert runs[0].data_hash == runs[1].data_hash
    assert runs[0].n_judgments == runs[1].n_judgments
    assert runs[0].results == runs[1].results  # seeded bootstrap: the same numbers
    assert AnalysisRun.objects.latest_for(judged).pk == second


def test_a_task_for_a_deleted_study_does_nothing(db):
    assert tasks.refit_study(987654, AnalysisRun.Trigger.ON_DEMAND) is None
    assert not AnalysisRun.objects.exists()


def test_the_nightly_task_refits_only_live_studies(judged):
    draft = make_study(slug="draft")
    closed = make_judged_study(slug="closed", participants=10)
    close_study(study=closed)
    run_ids = tasks.refit_live_studies()
    runs = AnalysisRun.objects.filter(pk__in=run_ids)
    assert [run.study for run in runs] == [judged]
    assert runs[0].trigger == AnalysisRun.Trigger.NIGHTLY
    assert not AnalysisRun.objects.filter(study__in=[draft, closed]).exists()


def test_the_beat_schedule_refits_nightly_at_the_configured_time():
    entry = settings.CELERY_BEAT_SCHEDULE["analysis-refit-live-studies"]
    assert entry["task"] == "analysis.tasks.refit_live_studies"
    assert entry["task"] == tasks.refit_live_studies.name
    assert entry["schedule"].hour == {2}
    assert entry["schedule"].minute == {30}


def test_the_refit_command_prints_a_summary_and_stores_a_command_run(judged):
    out = StringIO()
    call_command("refit", judged.slug, "--bootstrap", "50", "--seed", "5", stdout=out)
    run = AnalysisRun.objects.get(study=judged)
    assert run.trigger == AnalysisRun.Trigger.COMMAND
    assert run.parameters["seed"] == 5
    assert f"Run {run.pk} of 'judged': {run.n_judgments} valid judgments" in out.getvalue()
    assert "features: beta" in out.getvalue()
    # Where the time went (benchmarks/scale.py prints this line per size).
    assert re.search(
        r"Phases: reading \d+\.\d s, bootstrap weights \d+\.\d s, fitting \d+\.\d s, storing", out.getvalue()
    )


def test_the_refit_command_names_the_known_studies_for_an_unknown_slug(judged):
    with pytest.raises(CommandError, match="No study with slug 'nope' \\(studies: judged\\)"):
        call_command("refit", "nope", stdout=StringIO())


def test_a_run_left_running_past_the_time_limit_is_marked_interrupted_by_the_next_refit(judged, settings):
    stuck = AnalysisRun.objects.create(study=judged, trigger=AnalysisRun.Trigger.NIGHTLY)
    fresh = AnalysisRun.objects.create(study=judged, trigger=AnalysisRun.Trigger.ON_DEMAND)
    with time_machine.travel(timezone.now() + timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + 60)):
        fresh.created_at = timezone.now()
        fresh.save(update_fields=["created_at"])
        tasks.refit_study(judged.pk, AnalysisRun.Trigger.ON_DEMAND)
    stuck.refresh_from_db()
    fresh.refresh_from_db()
    assert stuck.status == AnalysisRun.Status.FAILED
    assert stuck.error.startswith("Interrupted")
    assert fresh.status == AnalysisRun.Status.RUNNING
