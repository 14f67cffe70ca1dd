"""Only verified submissions count (issue 9, items 3 and 8): reconciliation against the fake Prolific
server excludes participants Prolific never heard of, and webhooks cannot be turned on someone else."""

import math
from datetime import timedelta

import pytest
from django.db.models import Sum
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from surveys.models import Cell, Participant, ProlificEvent
from surveys.prolific import InvalidWebhook, reconcile_study, verification_counts, verify_webhook
from surveys.services.allocation import allocate
from surveys.services.lifecycle import go_live, launch_warnings
from tests.conftest import make_study
from tests.surveys.test_prolific_webhook import SECRET, signed_post, status_change

pytestmark = pytest.mark.django_db


@pytest.fixture
def live(settings):
    """A live Prolific study; pid0 and pid1 really took it, pid9 was invented an hour ago."""
    settings.PROLIFIC_VERIFY_GRACE_MINUTES = 30
    study = go_live(
        study=make_study(vignettes=3, vignettes_per_participant=2, prolific_study_id="st1", completion_code="DONE")
    )
    an_hour_ago = timezone.now() - timedelta(hours=1)
    people = {}
    for pid, session in [("pid0", "sub0"), ("pid1", "sub1"), ("pid9", "sub9")]:
        people[pid] = Participant.objects.create(
            study=study, prolific_pid=pid, session_id=session, started_at=an_hour_ago
        )
        allocate(participant=people[pid])
    return study, people


def held(study) -> int:
    return Cell.objects.filter(study=study).aggregate(n=Sum("reserved"))["n"] + 0


def test_reconcile_excludes_participants_prolific_has_no_submission_for(live, prolific):
    study, _people = live
    prolific.add_submission("sub0", participant_id="pid0", study_id="st1", status="ACTIVE")
    prolific.add_submission("sub1", participant_id="pid1", study_id="st1", status="AWAITING REVIEW")
    assert held(study) == 6

    result = reconcile_study(study=study)

    invented = Participant.objects.get(prolific_pid="pid9")
    assert (invented.status, invented.exclusion) == ("unverified", "no-prolific-submission")
    assert held(study) == 4
    assert result.unverified == 1
    assert result.released == 2
    assert Participant.objects.get(prolific_pid="pid0").exclusion == ""
    counts = verification_counts(study)
    assert (counts.verified, counts.awaiting, counts.unverified) == (2, 0, 1)
    assert reconcile_study(study=study).unverified == 0  # once is enough


def test_a_submission_whose_pid_disagrees_does_not_verify_the_participant(live, prolific):
    study, _ = live
    prolific.add_submission("sub0", participant_id="pid0", study_id="st1", status="ACTIVE")
    prolific.add_submission("sub1", participant_id="someone-else", study_id="st1", status="ACTIVE")
    prolific.add_submission("sub9", participant_id="pid9", study_id="st1", status="ACTIVE")

    result = reconcile_study(study=study)

    statuses = dict(Participant.objects.values_list("prolific_pid", "exclusion"))
    assert statuses == {"pid0": "", "pid1": "no-prolific-submission", "pid9": ""}
    assert result.mismatched == 1


def test_newcomers_are_awaiting_within_the_grace_period(live, prolific):
    study, _ = live
    Participant.objects.create(study=study, prolific_pid="pid5", session_id="sub5")  # just arrived
    prolific.add_submission("sub0", participant_id="pid0", study_id="st1", status="ACTIVE")
    prolific.add_submission("sub1", participant_id="pid1", study_id="st1", status="ACTIVE")
    prolific.add_submission("sub9", participant_id="pid9", study_id="st1", status="ACTIVE")

    assert reconcile_study(study=study).unverified == 0
    counts = verification_counts(study)
    assert (counts.verified, counts.awaiting, counts.unverified) == (3, 1, 0)


def test_the_dashboard_shows_the_verification_counts(live, prolific, staff_client):
    study, _ = live
    prolific.add_submission("sub0", participant_id="pid0", study_id="st1", status="ACTIVE")
    reconcile_study(study=study)
    page = staff_client.get(reverse("analysis:study", args=[study.slug])).content.decode()
    assert "On Prolific: 1 verified, 0 awaiting, 2 unverified" in page


def test_the_readiness_warns_when_anyone_with_the_link_can_take_part(db):
    assert "no Prolific study id is set: anyone with the link can take part" in launch_warnings(make_study())
    assert not any("study id" in w for w in launch_warnings(make_study(slug="s2", prolific_study_id="st2")))


# --- 8. Webhooks ---------------------------------------------------------------------------------


@pytest.fixture
def api(settings):
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET
    return APIClient(enforce_csrf_checks=True)


def test_a_webhook_naming_another_participant_is_refused_logged_and_changes_nothing(live, api, caplog):
    study, _people = live
    response = signed_post(api, status_change("sub0", "RETURNED", participant_id="pid1"))

    assert response.status_code == 400
    participant = Participant.objects.get(prolific_pid="pid0")
    assert (participant.status, participant.prolific_status) == ("started", "")
    assert held(study) == 6
    assert ProlificEvent.objects.count() == 0
    assert "names participant pid1, but pid0 entered with it" in caplog.text
    assert signed_post(api, status_change("sub0", "RETURNED", participant_id="pid0")).json()["detail"] == "released"


@pytest.mark.parametrize("timestamp", ["nan", "NaN", "inf", "-inf"])
def test_a_non_finite_timestamp_is_refused(live, api, timestamp):
    assert signed_post(api, status_change("sub0", "RETURNED", "pid0"), timestamp=timestamp).status_code == 401
    assert Participant.objects.get(prolific_pid="pid0").status == "started"
    with pytest.raises(InvalidWebhook, match="finite"):
        verify_webhook(body=b"{}", timestamp=timestamp, signature="x", secret=SECRET, now=math.pi)
