"""The sweep and the task: a dead worker's row is queued again, and a second delivery of a task is a no-op."""

from datetime import timedelta

import pytest
from django.utils import timezone

from llm_judging import tasks
from llm_judging.models import JudgeCall
from llm_judging.services.runs import start_judging_run, sweep_judge_calls

from .conftest import make_judge, queued

pytestmark = pytest.mark.django_db


def test_a_row_whose_worker_died_is_queued_again_and_one_at_the_cap_is_failed(
    judged_study, fake, django_capture_on_commit_callbacks
):
    start_judging_run(study=judged_study, judges=[make_judge(fake.url, study=judged_study)], orders="one")
    dead, capped = JudgeCall.objects.all()[:2]
    past = timezone.now() - timedelta(minutes=5)
    JudgeCall.objects.filter(pk=dead.pk).update(status="running", claim="x", lease_expires_at=past, attempts=1)
    JudgeCall.objects.filter(pk=capped.pk).update(status="running", claim="y", lease_expires_at=past, attempts=5)
    with django_capture_on_commit_callbacks() as callbacks:
        assert sweep_judge_calls(older_than_minutes=60) == 1
    assert len(queued(callbacks)) == 1
    assert JudgeCall.objects.get(pk=capped.pk).status == "failed"


def test_the_task_judges_once_and_a_second_delivery_pays_nothing(judged_study, fake):
    start_judging_run(study=judged_study, judges=[make_judge(fake.url, study=judged_study)], orders="one")
    call = JudgeCall.objects.first()
    assert tasks.judge.apply(args=(call.pk,)).get() == "done"
    assert tasks.judge.apply(args=(call.pk,)).get() == "skipped"
    assert len(fake.requests) == 1


def test_run_start_queues_one_task_per_item_on_commit(judged_study, fake, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        run = start_judging_run(study=judged_study, judges=[make_judge(fake.url, study=judged_study)], samples=2)
    assert run.planned == 9 * 2 * 2 == len(queued(callbacks))
