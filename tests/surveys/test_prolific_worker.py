"""Integration: the reconcile task on a real Celery worker, Redis as broker, the test's PostgreSQL, fake Prolific."""

import pytest
from django.db.models import Sum

from surveys.models import Cell, Participant
from surveys.prolific.tasks import reconcile_live_studies
from surveys.services.allocation import allocate
from surveys.services.lifecycle import go_live
from tests.conftest import make_study
from tests.fakes.prolific_server import FakeProlific
from tests.workers import celery_worker, own_queue, wait_for


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_the_beat_task_on_a_worker_reopens_the_cells_of_a_missed_return():
    study = go_live(
        study=make_study(vignettes=3, vignettes_per_participant=2, prolific_study_id="st1", completion_code="DONE")
    )
    participant = Participant.objects.create(study=study, prolific_pid="pid0", session_id="sub0")
    allocate(participant=participant)
    queue = own_queue("prolific")
    with FakeProlific() as prolific:
        prolific.add_submission("sub0", participant_id="pid0", study_id="st1", status="RETURNED")
        reconcile_live_studies.apply_async(queue=queue)
        env = {"PROLIFIC_API_URL": prolific.url, "PROLIFIC_API_TOKEN": prolific.token}
        with celery_worker(queue, env=env) as worker:
            wait_for(worker, lambda: Participant.objects.filter(status="returned").exists())
    participant.refresh_from_db()
    assert (participant.status, participant.prolific_status) == (Participant.Status.RETURNED, "RETURNED")
    assert Cell.objects.filter(study=study).aggregate(n=Sum("reserved"))["n"] == 0
    assert prolific.calls[0].authorization == f"Token {prolific.token}"
