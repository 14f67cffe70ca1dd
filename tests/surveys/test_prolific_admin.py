"""The study admin's Prolific actions: review and reconcile, with their messages."""

import re

import pytest
from django.urls import reverse

from surveys.models import AuditEvent, Participant, ProlificEvent, Study
from tests.conftest import make_study

CHANGELIST = "admin:surveys_study_changelist"


@pytest.fixture
def study(db, prolific):
    study = make_study(prolific_study_id="st1", invalid_policy=Study.InvalidPolicy.REJECT)
    prolific.add_study("st1", status="ACTIVE", reward=150)
    for name, status, exclusion in [
        ("ok", Participant.Status.COMPLETED, ""),
        ("fast", Participant.Status.COMPLETED, Participant.Exclusion.TOO_FAST),
    ]:
        Participant.objects.create(
            study=study, prolific_pid=f"pid-{name}", session_id=f"sub-{name}", status=status, exclusion=exclusion
        )
        prolific.add_submission(f"sub-{name}", participant_id=f"pid-{name}", study_id="st1", status="AWAITING REVIEW")
    return study


def run_action(client, action, study, **extra):
    data = {"action": action, "_selected_action": [study.pk], **extra}
    return client.post(reverse(CHANGELIST), data, follow=True)


def confirm_review(client, study, page: str):
    """Post the review page's form back, as its button does (with the submissions it showed)."""
    shown = re.findall(r'name="reviewed" value="(\d+)"', page)
    return run_action(client, "review_on_prolific", study, confirmed="yes", reviewed=shown)


def test_the_review_action_says_who_is_paid_and_what_before_anything_is_sent(client, researcher, study, prolific):
    page = run_action(client, "review_on_prolific", study).content.decode()

    assert "Nothing has been sent to Prolific yet" in page
    assert "To approve</th><td>1: each is paid the study&#x27;s reward (£1.50 each, £1.50 in all)" in page
    assert "<td>pid-fast</td><td>reject</td><td>too-fast</td><td>TOO_QUICKLY</td>" in page
    assert "Warning: 1 submissions will be rejected." in page
    assert prolific.calls_to("bulk-approve") == []
    assert prolific.calls_to("transition") == []
    assert prolific.submissions["sub-ok"]["status"] == "AWAITING REVIEW"
    assert not AuditEvent.objects.exists()

    text = confirm_review(client, study, page).content.decode()
    assert "Approved 1 submissions in one bulk call by res." in text
    assert "Rejected pid-fast (TOO_QUICKLY)" in text
    assert "1 approved, 1 rejected, 0 asked to return, 0 failed" in text
    assert prolific.submissions["sub-ok"]["status"] == "APPROVED"
    event = AuditEvent.objects.get()
    assert (event.action, event.username) == (AuditEvent.Action.PROLIFIC_REVIEWED, "res")
    assert (event.details["approved"], event.details["rejected"]) == (["pid-ok"], ["pid-fast"])


def test_a_submission_arriving_after_the_review_page_waits_for_the_next_review(client, researcher, study, prolific):
    page = run_action(client, "review_on_prolific", study).content.decode()
    Participant.objects.create(
        study=study, prolific_pid="pid-late", session_id="sub-late", status=Participant.Status.COMPLETED
    )
    prolific.add_submission("sub-late", participant_id="pid-late", study_id="st1", status="AWAITING REVIEW")

    confirm_review(client, study, page)
    assert prolific.submissions["sub-ok"]["status"] == "APPROVED"
    assert prolific.submissions["sub-late"]["status"] == "AWAITING REVIEW"


def test_the_reconcile_action_reports_the_counts(client, researcher, study, prolific):
    prolific.set_status("sub-ok", "RETURNED")
    response = run_action(client, "reconcile_with_prolific", study)
    assert "2 submissions on Prolific, 2 changed status" in response.content.decode()
    assert Participant.objects.get(prolific_pid="pid-ok").status == Participant.Status.RETURNED


def test_a_missing_token_is_reported_naming_the_variable(client, researcher, study, settings):
    settings.PROLIFIC_API_TOKEN = ""
    text = run_action(client, "reconcile_with_prolific", study).content.decode()
    assert "PROLIFIC_API_TOKEN is not set" in text
    text = run_action(client, "review_on_prolific", study).content.decode()
    assert "PROLIFIC_API_TOKEN is not set" in text
    assert "0 approved" not in text  # nothing was done: no summary that reads like a success


def test_reviewing_a_study_without_a_prolific_id_says_so_and_nothing_else(client, researcher, study):
    Study.objects.filter(pk=study.pk).update(prolific_study_id="")
    text = run_action(client, "review_on_prolific", study).content.decode()
    assert "has no Prolific study id" in text
    assert "0 approved" not in text


def test_the_policy_help_states_prolifics_rules(client, researcher, study):
    text = client.get(reverse("admin:surveys_study_change", args=[study.pk])).content.decode()
    assert "under 5" in text
    assert "never a reason to reject" in text


def test_the_actions_need_a_staff_login(client, study, prolific):
    response = run_action(client, "review_on_prolific", study)
    assert "/admin/login/" in response.redirect_chain[0][0]
    assert prolific.calls == []


def test_received_webhook_events_are_listed_read_only(client, researcher, db):
    ProlificEvent.objects.create(
        event_id="evt-<b>1</b>", event_type="submission.status.change", resource_id="sub-1", status="RETURNED"
    )
    response = client.get(reverse("admin:surveys_prolificevent_changelist"))
    text = response.content.decode()
    assert response.status_code == 200
    assert "evt-&lt;b&gt;1&lt;/b&gt;" in text
    assert "<b>1</b>" not in text
    assert client.get(reverse("admin:surveys_prolificevent_add")).status_code == 403
