"""Two guards no test caught when removed (issue 35 item 7): the Prolific events admin's own team scoping, and the
webhook's size and depth check before the signature (nothing large or deep is parsed unsigned)."""

import json
import time

import pytest
from django.urls import reverse

from surveys.models import Participant, ProlificEvent, StudyMembership
from surveys.prolific import InvalidWebhook, receive_webhook, sign_webhook
from tests.conftest import make_study
from tests.surveys import test_prolific_webhook as plain
from tests.surveys.test_prolific_webhook import (
    SECRET,
    signed_post,
    status_change,
)
from tests.test_teams import staff

api = plain.api  # the plain webhook tests' fixture


@pytest.mark.django_db
def test_the_prolific_events_admin_shows_a_team_only_its_own_studies_events(client):
    mine = make_study(slug="mine", prolific_study_id="a" * 24)
    theirs = make_study(slug="theirs", prolific_study_id="b" * 24)
    Participant.objects.create(study=mine, prolific_pid="p" * 24, session_id="my-session")
    Participant.objects.create(study=theirs, prolific_pid="q" * 24, session_id="their-session")
    for resource in ("my-session", "their-session", "a" * 24, "b" * 24):
        ProlificEvent.objects.create(event_id=f"e-{resource}", event_type="t", resource_id=resource, status="X")
    user = staff("researcher")
    StudyMembership.objects.create(study=mine, user=user, role=StudyMembership.Role.RESEARCHER)
    client.force_login(user)

    page = client.get(reverse("admin:surveys_prolificevent_changelist")).content.decode()

    assert "my-session" in page
    assert "a" * 24 in page
    assert "their-session" not in page  # another team's participant's submission
    assert "b" * 24 not in page  # another team's Prolific study
    theirs_pk = ProlificEvent.objects.get(resource_id="their-session").pk
    assert client.get(reverse("admin:surveys_prolificevent_change", args=[theirs_pk])).status_code in (302, 404)


def nested(levels: int) -> dict:
    event: dict = status_change("sub1", "RETURNED")
    inner: dict = {}
    event["extra"] = inner
    for _ in range(levels):
        inner["x"] = {}
        inner = inner["x"]
    return event


def test_a_deep_body_is_not_parsed_to_check_a_signature_made_over_its_parsed_form(db):
    """The signature may be over json.dumps of the event (Prolific's example), so a body sent with other spacing
    is parsed and re-serialised, but only when small and shallow: a deep one is refused unparsed (401)."""
    event = nested(20)
    now = str(int(time.time()))
    signature = sign_webhook(body=json.dumps(event).encode(), timestamp=now, secret=SECRET)
    spaced = json.dumps(event, indent=1).encode()  # well under the size limit, 20 levels deep
    headers = {"X-Prolific-Request-Timestamp": now, "X-Prolific-Request-Signature": signature}
    with pytest.raises(InvalidWebhook, match="signature does not match"):
        receive_webhook(body=spaced, headers=headers, secret=SECRET)


def test_a_large_body_is_not_parsed_to_check_a_signature_made_over_its_parsed_form(db):
    event = status_change("sub1", "RETURNED") | {"padding": "x" * 70_000}
    now = str(int(time.time()))
    signature = sign_webhook(body=json.dumps(event).encode(), timestamp=now, secret=SECRET)
    spaced = json.dumps(event, indent=1).encode()
    headers = {"X-Prolific-Request-Timestamp": now, "X-Prolific-Request-Signature": signature}
    with pytest.raises(InvalidWebhook, match="signature does not match"):
        receive_webhook(body=spaced, headers=headers, secret=SECRET)
    assert not ProlificEvent.objects.exists()


def test_over_http_a_body_over_the_size_limit_is_refused_before_its_signature_is_checked(api, db):
    response = signed_post(api, None, body=b"{" + b" " * 70_000 + b"}")  # correctly signed, and too large
    assert response.status_code == 413
