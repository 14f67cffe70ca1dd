"""Integration: the refit task on a real Celery worker process, Redis as broker, the test's PostgreSQL."""

import pytest

from analysis import tasks
from analysis.models import AnalysisRun

from ..conftest import make_judged_study
from ..workers import celery_worker, own_queue, wait_for


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_a_queued_refit_and_its_duplicate_store_two_snapshots_of_the_same_data():
    study = make_judged_study(participants=20, seed=2)
    queue = own_queue("refit")
    for _ in range(2):  # a redelivered message runs again: another snapshot of the same data
        tasks.refit_study.apply_async(args=[study.pk, AnalysisRun.Trigger.ON_DEMAND, None], queue=queue)
    with celery_worker(queue) as worker:
        wait_for(worker, lambda: AnalysisRun.objects.finished().filter(study=study).count() >= 2)
    runs = list(AnalysisRun.objects.filter(study=study).order_by("id"))
    assert [run.status for run in runs] == ["done", "done"]
    assert runs[0].data_hash == runs[1].data_hash
    assert runs[0].n_judgments == 20 * 3 * 5
    assert runs[0].trigger == AnalysisRun.Trigger.ON_DEMAND
