"""Prolific from the admin, end to end: the study admin's actions 'Create or update Prolific draft',
'Publish on Prolific' and 'Add places on Prolific', through the Django test client against the fake
Prolific API on 127.0.0.1 (tests/fakes/prolific_server.py)."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db.models import F
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from surveys.models import AuditEvent, Cell, Participant, Study
from surveys.prolific import tasks, verification_counts
from surveys.services.lifecycle import go_live
from tests.conftest import make_study

CHANGELIST = "admin:surveys_study_changelist"
PLACEHOLDERS = "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"


@pytest.fixture
def study(db):
    # 9 cells × 8 ÷ 3 = 24 judges, + 10 % = 27 places; 9 minutes from the design at £9.00 = £1.35.
    return make_study(
        description="Compare two answers to a moral dilemma.",
        vignettes_per_participant=3,
        completion_code="DONE1",
        failed_attention_code="ATTN1",
        no_consent_code="NOCON1",
        screened_out_code="FULL1",
        invalid_policy=Study.InvalidPolicy.ASK_RETURN,
        prolific_hourly_rate=Decimal("9.00"),
        prolific_margin_percent=10,
    )


def act(client, action, study, *, confirm=False):
    data = {"action": action, "_selected_action": [study.pk]}
    if confirm:
        data["confirmed"] = "yes"
    return client.post(reverse(CHANGELIST), data, follow=True)


def text_of(response) -> str:
    return response.content.decode()


def test_the_draft_action_first_shows_what_it_would_send_and_sends_nothing(client, researcher, study, prolific):
    response = act(client, "create_or_update_prolific_draft", study)

    page = text_of(response)
    assert response.status_code == 200
    assert "Nothing has been sent to Prolific yet" in page
    assert "27 (9 cells × 8 repetitions ÷ 3 vignettes per judge = 24 judges, + 10% margin)" in page
    assert "£1.35 per participant" in page
    assert "£9.00 per hour" in page
    assert "9 (from the design)" in page
    assert "http://testserver/s/s1/?PROLIFIC_PID={{%PROLIFIC_PID%}}" in page
    assert "REQUEST_RETURN" in page
    assert "Send to Prolific" in page
    assert prolific.calls == []
    study.refresh_from_db()
    assert study.prolific_study_id == ""


def test_confirming_creates_the_draft_with_the_designs_payload_and_stores_its_id(client, researcher, study, prolific):
    response = act(client, "create_or_update_prolific_draft", study, confirm=True)

    [call] = prolific.calls_to("/studies/")
    sent = call.body
    assert sent["external_study_url"] == "http://testserver/s/s1/" + PLACEHOLDERS
    assert sent["prolific_id_option"] == "url_parameters"
    assert (sent["total_available_places"], sent["reward"], sent["estimated_completion_time"]) == (27, 135, 9)
    assert sent["name"] == "Study s1"
    assert sent["description"] == "Compare two answers to a moral dilemma."
    assert sent["completion_codes"] == [
        {"code": "DONE1", "code_type": "COMPLETED", "actions": [{"action": "MANUALLY_REVIEW"}]},
        {
            "code": "ATTN1",
            "code_type": "FAILED_ATTENTION_CHECK",
            "actions": [{"action": "REQUEST_RETURN", "return_reason": "You did not pass the attention check."}],
        },
        {
            "code": "NOCON1",
            "code_type": "NO_CONSENT",
            "actions": [{"action": "REQUEST_RETURN", "return_reason": "You did not consent to take part."}],
        },
        {
            "code": "FULL1",
            "code_type": "OTHER",
            "actions": [{"action": "REQUEST_RETURN", "return_reason": "The study was full when you arrived."}],
        },
    ]
    [prolific_id] = prolific.studies
    study.refresh_from_db()
    assert (study.prolific_study_id, study.prolific_status) == (prolific_id, "UNPUBLISHED")
    assert study.estimated_minutes == 9  # what Prolific advertises is what the review's rules read
    assert study.prolific_synced_at is not None
    assert f"Prolific study {prolific_id} created as a draft (27 places, £1.35 for 9 minutes)" in text_of(response)


def test_running_it_again_patches_the_same_draft(client, researcher, study, prolific):
    act(client, "create_or_update_prolific_draft", study, confirm=True)
    Study.objects.filter(pk=study.pk).update(prolific_hourly_rate=Decimal("12.00"), prolific_margin_percent=25)

    response = act(client, "create_or_update_prolific_draft", study, confirm=True)

    assert len(prolific.studies) == 1
    [patch] = prolific.calls_to("/studies/", method="PATCH")
    [prolific_id] = prolific.studies
    assert patch.path == f"/api/v1/studies/{prolific_id}/"
    assert prolific.studies[prolific_id]["reward"] == 180  # £12.00 × 9 / 60
    assert prolific.studies[prolific_id]["total_available_places"] == 30  # 24 + 25 %
    assert "draft updated" in text_of(response)


def test_a_published_prolific_study_is_not_updated_and_the_researcher_is_told_why(client, researcher, study, prolific):
    prolific.add_study("c" * 24, status="ACTIVE", total_available_places=27)
    Study.objects.filter(pk=study.pk).update(prolific_study_id="c" * 24, prolific_link=Study.ProlificLink.CREATED)

    confirm_page = text_of(act(client, "create_or_update_prolific_draft", study))
    assert f"Will not be sent: The Prolific study {'c' * 24} is ACTIVE, no longer a draft" in confirm_page
    assert 'value="Send to Prolific"' not in confirm_page

    page = text_of(act(client, "create_or_update_prolific_draft", study, confirm=True))

    assert f"The Prolific study {'c' * 24} is ACTIVE, no longer a draft" in page
    assert "only its places" in page
    assert "Nothing was changed." in page
    assert prolific.calls_to("/studies/", method="PATCH") == []


def test_a_refusal_from_prolific_reaches_the_researcher_and_nothing_is_stored(client, researcher, study, prolific):
    Study.objects.filter(pk=study.pk).update(prolific_hourly_rate=Decimal("5.00"))

    confirm_page = text_of(act(client, "create_or_update_prolific_draft", study))
    assert "below Prolific&#x27;s minimum of £6.00" in confirm_page

    page = text_of(act(client, "create_or_update_prolific_draft", study, confirm=True))

    assert "answered 400: reward: The reward per hour (5.00 GBP) is below the minimum of 6.00 GBP per hour." in page
    assert "Nothing was changed." in page
    study.refresh_from_db()
    assert (study.prolific_study_id, study.prolific_status, study.estimated_minutes) == ("", "", 20)
    assert prolific.studies == {}


def test_an_outage_on_prolific_is_reported_and_nothing_is_stored(client, researcher, study, prolific):
    prolific.fail_next(503, path="/studies/")
    page = text_of(act(client, "create_or_update_prolific_draft", study, confirm=True))
    assert "answered 503" in page
    assert "Prolific may have created the draft all the same: look for &#x27;Study s1 (MoralJudge: s1)&#x27;" in page
    assert "Nothing was changed." in page
    study.refresh_from_db()
    assert study.prolific_study_id == ""


def test_without_a_token_the_actions_name_the_setting_and_show_no_page(client, researcher, study, settings):
    settings.PROLIFIC_API_TOKEN = ""
    for action in ["create_or_update_prolific_draft", "publish_on_prolific", "add_places_on_prolific"]:
        page = text_of(act(client, action, study))
        assert "PROLIFIC_API_TOKEN is not set" in page
        assert "Nothing has been sent to Prolific yet" not in page


def test_publishing_waits_for_the_study_to_go_live_then_transitions_the_draft(client, researcher, study, prolific):
    act(client, "create_or_update_prolific_draft", study, confirm=True)
    [prolific_id] = prolific.studies

    page = text_of(act(client, "publish_on_prolific", study))
    assert "Will not be sent: the study is draft here: go live first." in page
    assert 'value="Publish"' not in page  # nothing to confirm: only the way back

    go_live(study=Study.objects.get(pk=study.pk))
    confirm_page = text_of(act(client, "publish_on_prolific", study))
    assert f"{prolific_id} (UNPUBLISHED)" in confirm_page
    assert "£1.35 for 9 minutes" in confirm_page

    page = text_of(act(client, "publish_on_prolific", study, confirm=True))

    [transition] = prolific.calls_to("/transition/")
    assert transition.body == {"action": "PUBLISH"}
    assert prolific.studies[prolific_id]["status"] == "ACTIVE"
    study.refresh_from_db()
    assert study.prolific_status == "ACTIVE"
    assert f"Prolific study {prolific_id} published (ACTIVE)" in page


def test_adding_places_covers_the_cells_returns_left_open(client, researcher, study, prolific):
    act(client, "create_or_update_prolific_draft", study, confirm=True)
    go_live(study=Study.objects.get(pk=study.pk))
    act(client, "publish_on_prolific", study, confirm=True)
    [prolific_id] = prolific.studies
    # All 27 places taken and the cells full, but for 10 judgments that returned participants left open.
    prolific.set_study(prolific_id, places_taken=27, status="AWAITING REVIEW")
    Cell.objects.filter(study=study).update(completed=F("target"))
    for cell in Cell.objects.filter(study=study)[:5]:
        Cell.objects.filter(pk=cell.pk).update(completed=F("target") - 2)

    confirm_page = text_of(act(client, "add_places_on_prolific", study))
    assert "10 on 2 vignettes" in confirm_page  # five cells of 3 per vignette: two vignettes
    assert "5 (10 ÷ 3 vignettes per judge, + 10% margin)" in confirm_page  # 4 judges + 10 % → 5
    assert "27 places, 27 taken, 0 left" in confirm_page
    assert "only 2 vignettes have open cells and each judge needs 3" in confirm_page
    assert prolific.calls_to("/studies/", method="PATCH") == []

    page = text_of(act(client, "add_places_on_prolific", study, confirm=True))

    [patch] = prolific.calls_to("/studies/", method="PATCH")
    assert patch.body == {"total_available_places": 32}
    assert prolific.studies[prolific_id]["status"] == "ACTIVE"
    assert "5 places added on Prolific (27 → 32)" in page
    event = AuditEvent.objects.get(action=AuditEvent.Action.PROLIFIC_PLACES_ADDED)
    assert (event.username, event.details["places_added"], event.details["places_before"]) == ("res", 5, 27)


def test_the_prolific_actions_need_a_staff_login(client, study, prolific):
    response = act(client, "create_or_update_prolific_draft", study, confirm=True)
    assert "/admin/login/" in response.redirect_chain[0][0]
    assert prolific.calls == []


def arrive_from_prolific(link: str, *, pid: str, study_id: str, session: str):
    """A participant following the study URL Prolific holds, with Prolific's placeholders filled in."""
    filled = link.replace("{{%PROLIFIC_PID%}}", pid).replace("{{%STUDY_ID%}}", study_id)
    return Client().get(filled.replace("{{%SESSION_ID%}}", session).removeprefix("http://testserver"))


def test_entry_reconciliation_and_verification_use_the_id_the_draft_stored(
    client, researcher, study, prolific, settings
):
    """No copying: the id Prolific gave the draft is the one entries are checked against and reconciliation asks about."""
    settings.PROLIFIC_VERIFY_GRACE_MINUTES = 30
    act(client, "create_or_update_prolific_draft", study, confirm=True)
    go_live(study=Study.objects.get(pk=study.pk))
    act(client, "publish_on_prolific", study, confirm=True)
    [(prolific_id, on_prolific)] = prolific.studies.items()
    link = on_prolific["external_study_url"]
    people = {name: (name * 24, name * 24) for name in ["a", "b", "e"]}  # 24-hex PROLIFIC_PID, SESSION_ID
    for pid, session in people.values():
        entered = arrive_from_prolific(link, pid=pid, study_id=prolific_id, session=session)
        assert entered.url == "/s/s1/consent/"  # let in: on to the consent page
    other_study = arrive_from_prolific(link, pid="f" * 24, study_id="d" * 24, session="f" * 24)
    assert "This link belongs to a different Prolific study." in other_study.content.decode()
    Participant.objects.update(started_at=timezone.now() - timedelta(hours=1))
    prolific.add_submission("a" * 24, participant_id="a" * 24, study_id=prolific_id, status="RETURNED")
    prolific.add_submission("b" * 24, participant_id="b" * 24, study_id=prolific_id, status="ACTIVE")
    # "e…" entered with the right link but never started a submission on Prolific.

    tasks.reconcile_live_studies()

    assert prolific.calls_to(f"/studies/{prolific_id}/submissions/", method="GET")
    returned, active, invented = (Participant.objects.get(prolific_pid=pid) for pid, _ in people.values())
    assert returned.status == "returned"
    assert active.exclusion == ""
    assert invented.status == "unverified"
    counts = verification_counts(Study.objects.get(pk=study.pk))
    assert (counts.verified, counts.unverified) == (2, 1)


def test_the_publish_page_says_when_the_draft_on_prolific_is_behind_the_study(client, researcher, study, prolific):
    act(client, "create_or_update_prolific_draft", study, confirm=True)
    go_live(study=Study.objects.get(pk=study.pk))
    Study.objects.filter(pk=study.pk).update(prolific_margin_percent=50)  # 24 judges + 50 % = 36 places

    page = text_of(act(client, "publish_on_prolific", study))

    assert "the draft on Prolific differs from the study now (places 27 on Prolific, 36 now)" in page
    assert 'value="Publish"' in page  # a warning, not a refusal: the researcher decides
