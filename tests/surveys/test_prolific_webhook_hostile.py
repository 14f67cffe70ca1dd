"""Hostile webhooks stay refused: deep bodies, unknown statuses, replayed requests with new headers, events out of order."""

import json
import time

import pytest

from surveys.models import Participant, ProlificEvent
from surveys.prolific import json_depth
from tests.surveys import test_prolific_webhook as plain
from tests.surveys.test_prolific_webhook import reserved, signed_post, status_change

api, judging = plain.api, plain.judging  # the same fixtures as the plain webhook tests


def deep(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


def test_a_body_nested_100000_deep_with_a_wrong_signature_is_refused_before_parsing(api, judging):
    response = signed_post(api, None, body=deep(100_000), secret="not-the-secret")
    assert response.status_code in (401, 413), response.content
    assert not ProlificEvent.objects.exists()


def test_a_small_deeply_nested_body_with_a_wrong_signature_is_a_401(api, judging):
    body = b'{"a":' * 5_000 + b"1" + b"}" * 5_000  # under the size limit, far too deep for json.loads
    response = signed_post(api, None, body=body, secret="not-the-secret")
    assert response.status_code == 401
    assert "signature" in response.json()["detail"]


def test_a_deep_body_correctly_signed_is_a_400_not_a_crash(api, judging):
    body = b'{"a":' * 5_000 + b"1" + b"}" * 5_000
    response = signed_post(api, None, body=body)
    assert response.status_code == 400
    assert "nests deeper" in response.json()["detail"]


def test_a_body_larger_than_any_event_is_a_413(api, judging):
    response = signed_post(api, None, body=b" " * 70_000 + b"{}")
    assert response.status_code == 413
    assert "larger than" in response.json()["detail"]


def test_a_signature_with_characters_beyond_ascii_is_a_401_not_a_crash(api, judging):
    response = api.post(
        "/prolific/webhook/",
        data=json.dumps(status_change("sub1", "RETURNED")),
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE="sïgnature\xff",
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=str(int(time.time())),
    )
    assert response.status_code == 401
    assert not ProlificEvent.objects.exists()


def test_json_depth_skips_brackets_inside_strings():
    assert json_depth(b'{"a": "[[[[{{{{\\"[["}') == 1
    assert json_depth(deep(100_000)) == 100_000


def test_a_signed_unknown_status_is_refused_and_nothing_is_stored(api, judging):
    _study, participant = judging
    response = signed_post(api, status_change("sub1", "HACKED"), event_id="evt-unknown")
    assert response.status_code == 400
    assert "Unknown submission status 'HACKED'" in response.json()["detail"]
    assert not ProlificEvent.objects.exists()
    participant.refresh_from_db()
    assert participant.prolific_status == ""


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"event_type": "submission.status.change", "resource_id": ["sub1"], "status": "RETURNED"}, "resource_id"),
        ({"event_type": "submission.status.change", "resource_id": "s" * 65, "status": "RETURNED"}, "resource_id"),
        ({"resource_id": "sub1", "status": "RETURNED"}, "event_type"),
        ({"event_type": "submission.status.change", "resource_id": "sub1", "status": 3}, "status"),
        ([1, 2, 3], "JSON object"),
    ],
)
def test_a_signed_malformed_event_is_a_400_that_says_what(api, judging, payload, message):
    response = signed_post(api, payload)
    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert not ProlificEvent.objects.exists()


@pytest.mark.parametrize("text", ["sub\\u0000", "sub\\ud800"])
def test_a_signed_event_with_text_no_database_stores_is_a_400(api, judging, text):
    body = json.dumps(status_change("sub1", "RETURNED")).replace('"sub1"', f'"{text}"').encode()
    response = signed_post(api, None, body=body)
    assert response.status_code == 400
    assert "NUL character or a lone surrogate" in response.json()["detail"]
    assert not ProlificEvent.objects.exists()


def test_an_x_event_id_header_is_not_read_the_signed_content_identifies_the_event(api, judging):
    _study, _participant = judging
    first = signed_post(api, status_change("sub1", "AWAITING REVIEW"), event_id="x" * 500)
    assert first.json()["detail"] == "recorded"
    again = signed_post(api, status_change("sub1", "AWAITING REVIEW"), event_id="evt-2")
    assert again.json()["detail"] == "duplicate"
    assert ProlificEvent.objects.count() == 1
    # Another signed body is another event, whatever X-Event-ID it repeats.
    assert signed_post(api, status_change("sub1", "RETURNED"), event_id="evt-2").json()["detail"] == "released"


def test_a_captured_request_resent_with_new_headers_changes_nothing_and_the_next_genuine_event_applies(api, judging):
    """Issue 35's replay: the captured body and signature, resent within the 5 minutes with a new X-Event-ID and
    an X-Timestamp ten years ahead, used to be accepted and made the next genuine event "stale"."""
    _study, participant = judging
    now = int(time.time())
    body = json.dumps(status_change("sub1", "AWAITING REVIEW")).encode()
    assert signed_post(api, None, body=body, timestamp=now, sent_at=now).json()["detail"] == "recorded"

    ten_years = now + 10 * 365 * 24 * 3600
    replay = signed_post(api, None, body=body, timestamp=now, event_id="evt-forged", sent_at=ten_years)
    respaced = signed_post(api, None, body=json.dumps(json.loads(body), indent=2).encode(), timestamp=now)

    assert replay.json()["detail"] == "duplicate"
    # Prolific's own example signs json.dumps of the event, so a respaced copy still verifies: the same content.
    assert respaced.json()["detail"] == "duplicate"
    genuine = signed_post(api, status_change("sub1", "APPROVED"), timestamp=now + 1, sent_at=now + 1)
    assert genuine.json()["detail"] == "recorded"
    participant.refresh_from_db()
    assert participant.prolific_status == "APPROVED"


def test_an_x_timestamp_after_the_signature_is_taken_as_the_signed_time(api, judging):
    """A first delivery dated ten years ahead cannot push its date past its signature: a later genuine event applies."""
    _study, participant = judging
    now = int(time.time())
    ahead = signed_post(api, status_change("sub1", "AWAITING REVIEW"), timestamp=now, sent_at=now + 10**8)
    assert ahead.json()["detail"] == "recorded"
    participant.refresh_from_db()
    assert participant.prolific_status_at.timestamp() <= now + 1
    later = signed_post(api, status_change("sub1", "APPROVED"), timestamp=now + 2)
    assert later.json()["detail"] == "recorded"


@pytest.mark.parametrize("offset", [-6 * 60, 6 * 60, 10 * 365 * 24 * 3600])
def test_a_signed_timestamp_outside_five_minutes_of_now_is_refused(api, judging, offset):
    response = signed_post(api, status_change("sub1", "RETURNED"), timestamp=int(time.time()) + offset)
    assert response.status_code == 401
    assert not ProlificEvent.objects.exists()


def test_a_late_older_event_does_not_overwrite_a_newer_status(api, judging):
    study, participant = judging
    now = int(time.time())
    newer = signed_post(api, status_change("sub1", "APPROVED"), event_id="evt-new", sent_at=now)
    assert newer.json()["detail"] == "recorded"

    older = signed_post(api, status_change("sub1", "RETURNED"), event_id="evt-old", sent_at=now - 60)

    assert older.status_code == 200
    assert older.json() == {"detail": "stale", "released": 0}
    participant.refresh_from_db()
    assert participant.prolific_status == "APPROVED"
    assert participant.status != Participant.Status.RETURNED
    assert reserved(study) == 2
    assert ProlificEvent.objects.get(status="RETURNED").sent_at.timestamp() == now - 60
    # Redelivering the stale event is a duplicate; a newer one still applies.
    assert signed_post(api, status_change("sub1", "RETURNED"), event_id="evt-old").json()["detail"] == "duplicate"
    later = signed_post(api, status_change("sub1", "AWAITING REVIEW"), timestamp=now + 5, sent_at=now + 5)
    assert later.json()["detail"] == "recorded"
    participant.refresh_from_db()
    assert participant.prolific_status == "AWAITING REVIEW"
    assert participant.prolific_status_at.timestamp() == now + 5


def test_events_in_order_are_all_applied(api, judging):
    study, _participant = judging
    now = int(time.time())
    assert signed_post(api, status_change("sub1", "AWAITING REVIEW"), sent_at=now - 10).json()["detail"] == "recorded"
    assert signed_post(api, status_change("sub1", "RETURNED"), sent_at=now).json()["detail"] == "released"
    assert reserved(study) == 0


@pytest.mark.parametrize("value", ["nan", "soon", "1e300", "-5"])
def test_an_x_timestamp_that_is_not_a_time_is_a_400(api, judging, value):
    response = signed_post(api, status_change("sub1", "RETURNED"), sent_at=value)
    assert response.status_code == 400
    assert "X-Timestamp" in response.json()["detail"]
    assert not ProlificEvent.objects.exists()


def test_the_signature_is_checked_on_the_raw_bytes_first(api, judging):
    # Signed exactly as sent, with spacing json.dumps would not produce: accepted without re-serialising.
    body = json.dumps(status_change("sub1", "AWAITING REVIEW"), indent=3).encode()
    assert signed_post(api, None, body=body).json()["detail"] == "recorded"


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_events_out_of_order_leave_the_newest_status():
    from datetime import UTC, datetime

    from surveys.prolific import receive_webhook_event
    from surveys.services.allocation import allocate
    from surveys.services.lifecycle import go_live
    from tests.conftest import at_once, make_study

    study = go_live(
        study=make_study(vignettes=3, vignettes_per_participant=2, prolific_study_id="st1", completion_code="DONE")
    )
    participant = Participant.objects.create(study=study, prolific_pid="pid1", session_id="sub1")
    allocate(participant=participant)
    statuses = ["ACTIVE", "AWAITING REVIEW", "APPROVED", "AWAITING REVIEW", "ACTIVE", "APPROVED"]
    newest = len(statuses) - 1

    def deliver(index):
        return lambda: receive_webhook_event(
            payload=status_change("sub1", statuses[index]),
            event_id=f"evt-{index}",
            sent_at=datetime.fromtimestamp(1_800_000_000 + index, tz=UTC),
        )

    assert at_once(*[deliver(i) for i in reversed(range(len(statuses)))]) == [None] * len(statuses)

    participant.refresh_from_db()
    assert participant.prolific_status == statuses[newest]
    assert participant.prolific_status_at.timestamp() == 1_800_000_000 + newest
    assert ProlificEvent.objects.count() == len(statuses)
