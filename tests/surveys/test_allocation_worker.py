"""Integration: the expiry sweep on a real Celery worker, Redis as broker, the test's PostgreSQL."""

import time
from datetime import timedelta

import pytest
from django.db.models import Sum
from django.utils import timezone

from surveys.models import Assignment, Cell, Participant
from surveys.services.allocation import allocate
from surveys.services.lifecycle import go_live
from surveys.tasks import release_expired_reservations
from tests.conftest import make_study
from tests.workers import celery_worker, own_queue, wait_for


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_the_sweep_on_a_worker_reopens_expired_cells_and_a_second_run_changes_nothing():
    study = go_live(study=make_study(vignettes=3, vignettes_per_participant=2))
    participant = Participant.objects.create(study=study, prolific_pid="a" * 24)
    allocate(participant=participant)
    Assignment.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    queue = own_queue("sweep")
    release_expired_reservations.apply_async(queue=queue)
    release_expired_reservations.apply_async(queue=queue)  # a redelivery, or the next beat tick
    with celery_worker(queue) as worker:
        wait_for(worker, lambda: Participant.objects.filter(status="expired").exists())
        time.sleep(1)  # let the second delivery run too
    participant.refresh_from_db()
    assert participant.status == Participant.Status.EXPIRED
    assert Cell.objects.filter(study=study).aggregate(n=Sum("reserved"))["n"] == 0
    assert set(Assignment.objects.values_list("status", flat=True)) == {Assignment.Status.RELEASED}
