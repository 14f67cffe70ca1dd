"""POST /prolific/webhook/: signed by the tests with Prolific's scheme, applied once."""

import base64
import hashlib
import hmac
import json
import time

import pytest
from django.db.models import Sum
from rest_framework.test import APIClient

from surveys.models import Cell, Participant, ProlificEvent
from surveys.prolific import receive_webhook_event, verify_webhook
from surveys.services.allocation import allocate
from surveys.services.lifecycle import go_live
from tests.conftest import at_once, make_study

SECRET = "whsec-test-secret"
URL = "/prolific/webhook/"


def signed_post(api, payload, *, secret=SECRET, timestamp=None, body=None, event_id=None, sent_at=None):
    """What Prolific sends: base64(HMAC-SHA256(secret, timestamp + body)) and the UNIX timestamp; with `event_id` and
    `sent_at`, the X-Event-ID and X-Timestamp headers."""
    body = body if body is not None else json.dumps(payload).encode()
    timestamp = str(int(time.time())) if timestamp is None else str(timestamp)
    signature = base64.b64encode(hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest())
    headers = {"HTTP_X_EVENT_ID": event_id} if event_id is not None else {}
    if sent_at is not None:
        headers["HTTP_X_TIMESTAMP"] = str(sent_at)
    return api.post(
        URL,
        data=body,
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=signature.decode(),
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
        **headers,
    )


def status_change(session_id, status, participant_id="pid1"):
    return {
        "resource_id": session_id,
        "event_type": "submission.status.change",
        "participant_id": participant_id,
        "status": status,
    }


@pytest.fixture
def api(settings):
    settings.PROLIFIC_WEBHOOK_SECRET = SECRET
    return APIClient(enforce_csrf_checks=True)


@pytest.fixture
def judging(db):
    """A live study and a participant holding k reserved cells."""
    study = go_live(
        study=make_study(vignettes=3, vignettes_per_participant=2, prolific_study_id="st1", completion_code="DONE")
    )
    participant = Participant.objects.create(study=study, prolific_pid="pid1", session_id="sub1")
    allocate(participant=participant)
    return study, participant


def reserved(study):
    return Cell.objects.filter(study=study).aggregate(n=Sum("reserved"))["n"]


def test_returned_reopens_the_participants_cells_at_once(api, judging):
    study, participant = judging
    assert reserved(study) == 2

    response = signed_post(api, status_change("sub1", "RETURNED"))

    assert response.status_code == 200, response.content
    assert response.json() == {"detail": "released", "released": 2}
    assert reserved(study) == 0
    participant.refresh_from_db()
    assert participant.prolific_status == "RETURNED"
    assert participant.status == Participant.Status.RETURNED
    assert participant.exclusion == Participant.Exclusion.RETURNED


def test_timed_out_reopens_the_cells_too(api, judging):
    study, participant = judging
    assert signed_post(api, status_change("sub1", "TIMED-OUT")).status_code == 200
    participant.refresh_from_db()
    assert participant.status == Participant.Status.TIMED_OUT
    assert reserved(study) == 0


def test_awaiting_review_is_recorded_without_touching_cells(api, judging):
    study, participant = judging
    assert signed_post(api, status_change("sub1", "AWAITING REVIEW")).json()["detail"] == "recorded"
    participant.refresh_from_db()
    assert participant.prolific_status == "AWAITING REVIEW"
    assert reserved(study) == 2


def test_a_repeated_event_is_ignored(api, judging):
    study, _participant = judging
    payload = status_change("sub1", "RETURNED") | {"event_id": "evt-1"}
    assert signed_post(api, payload).json()["detail"] == "released"
    # Someone else takes the freed places; a redelivered event must not free anything again.
    Cell.objects.filter(study=study).update(reserved=1)

    again = signed_post(api, payload)

    assert again.status_code == 200
    assert again.json()["detail"] == "duplicate"
    assert reserved(study) == Cell.objects.filter(study=study).count()
    assert ProlificEvent.objects.count() == 1


def test_an_event_without_an_id_is_recognised_by_its_content(api, judging):
    assert signed_post(api, status_change("sub1", "RETURNED")).json()["detail"] == "released"
    assert signed_post(api, status_change("sub1", "RETURNED")).json()["detail"] == "duplicate"
    assert ProlificEvent.objects.count() == 1


def test_a_wrong_signature_is_refused_with_401_and_changes_nothing(api, judging):
    study, _participant = judging
    response = signed_post(api, status_change("sub1", "RETURNED"), secret="not-the-secret")
    assert response.status_code == 401
    assert "signature" in response.json()["detail"]
    assert reserved(study) == 2
    assert not ProlificEvent.objects.exists()


def test_a_tampered_body_is_refused(api, judging):
    good = json.dumps(status_change("sub1", "AWAITING REVIEW")).encode()
    timestamp = str(int(time.time()))
    signature = base64.b64encode(hmac.new(SECRET.encode(), timestamp.encode() + good, hashlib.sha256).digest())
    response = api.post(
        URL,
        data=json.dumps(status_change("sub1", "RETURNED")),
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=signature.decode(),
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=timestamp,
    )
    assert response.status_code == 401


def test_a_stale_timestamp_is_refused(api, judging):
    study, _ = judging
    response = signed_post(api, status_change("sub1", "RETURNED"), timestamp=int(time.time()) - 6 * 60)
    assert response.status_code == 401
    assert "5 minutes" in response.json()["detail"]
    assert reserved(study) == 2


def test_missing_signature_headers_are_refused(api, judging):
    response = api.post(URL, data=status_change("sub1", "RETURNED"), format="json")
    assert response.status_code == 401
    assert "X-Prolific-Request-Signature" in response.json()["detail"]


def test_a_signed_body_that_is_not_json_is_a_400(api, judging):
    response = signed_post(api, None, body=b"not json")
    assert response.status_code == 400
    assert "JSON" in response.json()["detail"]


def test_a_status_change_without_a_status_is_a_400(api, judging):
    payload = status_change("sub1", "")
    response = signed_post(api, payload)
    assert response.status_code == 400
    assert "needs a status" in response.json()["detail"]
    assert not ProlificEvent.objects.exists()


def test_an_unknown_submission_is_acknowledged_and_ignored(api, judging):
    response = signed_post(api, status_change("never-seen", "RETURNED"))
    assert response.status_code == 200
    assert response.json()["detail"] == "unknown-submission"


def test_other_event_types_are_acknowledged_and_ignored(api, judging):
    response = signed_post(api, {"resource_id": "st1", "event_type": "study.status.change", "status": "COMPLETED"})
    assert response.status_code == 200
    assert response.json()["detail"] == "ignored"


def test_without_a_configured_secret_nothing_is_accepted(api, judging, settings):
    settings.PROLIFIC_WEBHOOK_SECRET = ""
    response = signed_post(api, status_change("sub1", "RETURNED"))
    assert response.status_code == 503
    assert "PROLIFIC_WEBHOOK_SECRET" in response.json()["detail"]


def test_only_post_is_allowed(api, db):
    assert api.get(URL).status_code == 405


def test_the_signature_of_prolifics_python_example_is_accepted():
    # Prolific's example signs json.dumps(parsed body); a body sent with other spacing still verifies.
    payload = status_change("sub1", "RETURNED")
    timestamp = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), (timestamp + json.dumps(payload)).encode(), hashlib.sha256).digest()
    compact = json.dumps(payload, separators=(",", ":")).encode()
    verify_webhook(body=compact, timestamp=timestamp, signature=base64.b64encode(digest).decode(), secret=SECRET)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_deliveries_of_one_event_release_the_cells_once():
    study = go_live(
        study=make_study(vignettes=3, vignettes_per_participant=2, prolific_study_id="st1", completion_code="DONE")
    )
    participant = Participant.objects.create(study=study, prolific_pid="pid1", session_id="sub1")
    allocate(participant=participant)
    payload = status_change("sub1", "RETURNED") | {"event_id": "evt-race"}
    outcomes = []

    def deliver():
        outcomes.append(receive_webhook_event(payload=payload).outcome)

    assert at_once(*[deliver] * 8) == [None] * 8
    assert sorted(outcomes) == ["duplicate"] * 7 + ["released"]
    assert reserved(study) == 0
    assert ProlificEvent.objects.count() == 1


def test_an_event_naming_another_participant_is_a_400_and_changes_nothing(api, judging):
    study, participant = judging

    response = signed_post(api, status_change("sub1", "RETURNED", participant_id="someone-else"))

    assert response.status_code == 400
    assert response.json() == {"detail": "Submission sub1 belongs to another participant. Not applied."}
    assert reserved(study) == 2
    assert not ProlificEvent.objects.exists()
    participant.refresh_from_db()
    assert participant.status != Participant.Status.RETURNED
