"""The periodic reconciliation catches what a missed webhook would have said."""

import time

import pytest
from django.db.models import Sum

from surveys.models import Cell, Participant
from surveys.prolific import client as prolific_client
from surveys.prolific import reconcile_study
from surveys.prolific.tasks import reconcile_live_studies
from surveys.services.allocation import allocate
from surveys.services.lifecycle import go_live
from tests.conftest import make_study
from tests.surveys import test_prolific_webhook as webhooks
from tests.surveys.test_prolific_webhook import signed_post, status_change

api = webhooks.api  # the webhook tests' client, with the webhook secret set


@pytest.fixture
def live(db):
    study = go_live(
        study=make_study(vignettes=3, vignettes_per_participant=2, prolific_study_id="st1", completion_code="DONE")
    )
    people = []
    for n in range(3):
        participant = Participant.objects.create(study=study, prolific_pid=f"pid{n}", session_id=f"sub{n}")
        allocate(participant=participant)
        people.append(participant)
    return study, people


def reserved(study):
    return Cell.objects.filter(study=study).aggregate(n=Sum("reserved"))["n"]


def test_a_missed_returned_webhook_is_caught_by_the_reconcile_task(live, prolific):
    study, _people = live
    prolific.add_submission("sub0", participant_id="pid0", study_id="st1", status="RETURNED")
    prolific.add_submission("sub1", participant_id="pid1", study_id="st1", status="ACTIVE")
    prolific.add_submission("sub2", participant_id="pid2", study_id="st1", status="TIMED-OUT")
    prolific.add_submission("sub9", participant_id="pid9", study_id="st1", status="RETURNED")  # never reached us
    assert reserved(study) == 6

    summaries = reconcile_live_studies()

    assert reserved(study) == 2  # only pid1's pages are still held
    statuses = dict(Participant.objects.values_list("prolific_pid", "status"))
    assert statuses == {"pid0": "returned", "pid1": "started", "pid2": "timed-out"}
    assert "1 never reached MoralJudge" in summaries[0]


def test_reconciling_twice_changes_nothing_the_second_time(live, prolific):
    study, _ = live
    prolific.add_submission("sub0", participant_id="pid0", study_id="st1", status="RETURNED")
    first = reconcile_study(study=study)
    Cell.objects.filter(study=study).update(reserved=0)  # as if the freed places were reused and finished

    second = reconcile_study(study=study)

    assert (first.changed, first.released) == (1, 2)
    assert (second.changed, second.released) == (0, 0)
    assert reserved(study) == 0


def test_a_participant_found_by_prolific_id_gets_their_submission_id(db, prolific):
    study = go_live(study=make_study(prolific_study_id="st1", completion_code="DONE"))
    Participant.objects.create(study=study, prolific_pid="pid0")  # arrived without SESSION_ID
    prolific.add_submission("sub0", participant_id="pid0", study_id="st1", status="AWAITING REVIEW")

    reconcile_study(study=study)

    participant = Participant.objects.get(prolific_pid="pid0")
    assert (participant.session_id, participant.prolific_status) == ("sub0", "AWAITING REVIEW")


def test_studies_that_are_not_live_or_have_no_prolific_id_are_skipped(db, prolific):
    make_study(slug="draft", prolific_study_id="st1")
    go_live(study=make_study(slug="no-id"))
    assert reconcile_live_studies() == []
    assert prolific.calls == []


def test_a_prolific_outage_makes_the_task_retry(live, prolific):
    prolific.fail_next(503, times=3, retry_after="0")
    with pytest.raises(prolific_client.Retryable):
        reconcile_live_studies()  # called directly, Celery re-raises what it would retry


def test_the_beat_schedule_names_the_reconcile_task_every_ten_minutes(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["prolific-reconcile-live-studies"]
    assert entry["task"] == reconcile_live_studies.name
    assert entry["schedule"] == 600.0


def test_an_older_submission_of_the_same_person_does_not_touch_the_current_one(live, prolific):
    study, _people = live
    prolific.add_submission("old-sub", participant_id="pid0", study_id="st1", status="RETURNED")

    result = reconcile_study(study=study)

    assert result.unknown == 1
    assert Participant.objects.get(prolific_pid="pid0").status == Participant.Status.STARTED
    assert reserved(study) == 6


def test_a_webhook_older_than_a_reconciled_status_arrives_stale_and_changes_nothing(live, prolific, api):
    study, _people = live
    prolific.add_submission("sub1", participant_id="pid1", study_id="st1", status="AWAITING REVIEW")
    asked = time.time()

    reconcile_study(study=study)

    participant = Participant.objects.get(prolific_pid="pid1")
    assert participant.prolific_status == "AWAITING REVIEW"
    assert asked <= participant.prolific_status_at.timestamp() <= time.time()  # when the list was asked for
    # Prolific's webhook for the earlier return, delayed until now: older than what reconciliation saw.
    late = signed_post(api, status_change("sub1", "RETURNED", "pid1"), event_id="evt-late", sent_at=int(asked) - 60)
    assert late.json() == {"detail": "stale", "released": 0}
    participant.refresh_from_db()
    assert (participant.prolific_status, participant.status) == ("AWAITING REVIEW", Participant.Status.STARTED)
    assert reserved(study) == 6
    after = int(asked) + 60  # signed then too: no header dates an event after its signature
    newer = signed_post(api, status_change("sub1", "APPROVED", "pid1"), timestamp=after, sent_at=after)
    assert newer.json()["detail"] == "recorded"  # a webhook sent after the reconciliation still applies


def test_a_status_reconciliation_already_had_is_stamped_too(live, prolific, api):
    study, _people = live
    Participant.objects.filter(prolific_pid="pid0").update(prolific_status="RETURNED")  # applied without a time
    Participant.objects.filter(prolific_pid="pid0").update(status=Participant.Status.RETURNED)
    prolific.add_submission("sub0", participant_id="pid0", study_id="st1", status="RETURNED")
    asked = time.time()

    result = reconcile_study(study=study)

    assert (result.changed, result.released) == (0, 0)
    late = signed_post(api, status_change("sub0", "ACTIVE", "pid0"), event_id="evt-late", sent_at=int(asked) - 60)
    assert late.json()["detail"] == "stale"
    assert Participant.objects.get(prolific_pid="pid0").prolific_status == "RETURNED"


def test_reconciliation_does_not_overwrite_a_status_a_newer_webhook_applied(live, prolific, api):
    study, _people = live
    # Prolific's list still says AWAITING REVIEW; a webhook sent after the list was read said APPROVED.
    prolific.add_submission("sub1", participant_id="pid1", study_id="st1", status="AWAITING REVIEW")
    prolific.add_submission("sub2", participant_id="pid2", study_id="st1", status="TIMED-OUT")
    later = int(time.time()) + 240  # signed then, within the 5 minutes a signature is good for
    for event in (status_change("sub1", "APPROVED", "pid1"), status_change("sub2", "ACTIVE", "pid2")):
        assert signed_post(api, event, timestamp=later, sent_at=later).json()["detail"] == "recorded"

    result = reconcile_study(study=study)

    assert dict(Participant.objects.values_list("prolific_pid", "prolific_status")) == {
        "pid0": "",
        "pid1": "APPROVED",
        "pid2": "ACTIVE",
    }
    assert (result.changed, result.released) == (0, 0)
    assert reserved(study) == 6
