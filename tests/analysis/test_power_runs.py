"""The reported test's power off the request: a PowerRun simulated by its task, resumed, read by page and API."""

import pytest
from django.utils import timezone

from analysis.models import AnalysisRun, PowerRun
from analysis.power.reported_test import Design
from analysis.services import refit_study
from analysis.services.power_plan import page_plan
from analysis.services.power_runs import PowerPlanRun, answer_sd_prefill, power_of_run, simulate_power_run
from analysis.tasks import simulate_power
from tests.conftest import make_judged_study

SMALL = PowerPlanRun(Design.of(systems=3, gap=1.5, vignettes=3, repetitions=2, pairs_per_judge=3), 20, 10, 1)
QUERY = "vignettes=3&repetitions=2&gap=1.5&simulations=20&seed=1&answer_sd=0.2"


@pytest.fixture
def study(db):
    return make_judged_study(participants=30, seed=5)


def a_simulating_run(study, plan: PowerPlanRun) -> PowerRun:
    """A run as a worker has not yet picked it up (created now: not stalled, so not sent again)."""
    return PowerRun.objects.create(study=study, key=plan.key, design=plan.as_json(), updated_at=timezone.now())


def test_the_task_simulates_a_run_and_a_second_delivery_changes_nothing(study):
    run = a_simulating_run(study, SMALL)
    assert power_of_run(run) is None
    simulate_power(run.pk)
    run.refresh_from_db()
    assert run.status == PowerRun.Status.DONE
    figures = power_of_run(run)
    assert figures is not None
    assert figures.reported.simulations == 20
    assert figures.levers.more_vignettes[0].vignettes == 3
    tallies = dict(run.tallies)
    simulate_power(run.pk)
    run.refresh_from_db()
    assert run.tallies == tallies


def test_a_run_stopped_half_way_resumes_to_the_same_figures(study):
    whole = a_simulating_run(study, SMALL)
    simulate_power_run(run_id=whole.pk)
    whole.refresh_from_db()
    other = PowerPlanRun(SMALL.design, SMALL.simulations, SMALL.lever_simulations, SMALL.seed, target=0.8)
    assert other.key == SMALL.key
    planned = next(name for name in whole.tallies if name.endswith("-n20"))
    design_only = {planned: whole.tallies[planned]}  # its worker died after the design, before the levers
    PowerRun.objects.filter(pk=whole.pk).update(
        status=PowerRun.Status.SIMULATING, finished_at=None, tallies=design_only
    )
    simulate_power_run(run_id=whole.pk)
    resumed = PowerRun.objects.get(pk=whole.pk)
    assert resumed.tallies == whole.tallies
    assert power_of_run(resumed).reported == power_of_run(whole).reported


def test_the_api_answers_202_while_simulating_then_the_power_with_the_interval_and_levers(staff_client, study):
    from analysis.forms import PowerForm

    form = PowerForm(PowerForm.initial_for(study) | dict(part.split("=") for part in QUERY.split("&")))
    assert form.is_valid(), form.errors
    run = a_simulating_run(study, page_plan(form.design()))
    waiting = staff_client.get(f"/api/studies/judged/power/?{QUERY}")
    assert waiting.status_code == 202
    assert waiting.json()["status"] == "simulating"
    simulate_power(run.pk)
    done = staff_client.get(f"/api/studies/judged/power/?{QUERY}")
    assert done.status_code == 200
    body = done.json()
    assert 0 <= body["power"] <= 1
    assert body["interval"].startswith("the headline test")
    assert body["answer_sd"] == 0.2
    assert {"vignettes_needed_for_0.8", "repetitions_needed_for_0.8", "levers", "advice"} <= set(body)
    assert staff_client.get("/api/studies/judged/power/?vignettes=0").status_code == 400


def test_the_answer_sd_is_prefilled_from_a_refit_and_says_where_it_came_from(study):
    assumed = answer_sd_prefill(study)
    assert assumed.value == 0.4
    assert assumed.source.startswith("Assumed 0.4")
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND)
    estimated = answer_sd_prefill(study)
    assert estimated.source.startswith(f"Estimated from this study's refit {run.pk}")
    assert 0 <= estimated.value < 2
