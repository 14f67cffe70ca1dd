"""The Prolific API client against a real fake Prolific server on 127.0.0.1."""

import httpx
import pytest

from surveys.prolific import client

REJECTION_MESSAGE = "x" * 120


def test_it_lists_every_submission_across_pages(prolific):
    for n in range(5):
        prolific.add_submission(f"sub{n}", participant_id=f"pid{n}", study_id="st1", status="AWAITING REVIEW")
    prolific.add_submission("other", participant_id="pidx", study_id="st2", status="ACTIVE")

    submissions = client.list_submissions("st1")

    assert [s.id for s in submissions] == [f"sub{n}" for n in range(5)]
    assert submissions[0].participant_id == "pid0"
    assert submissions[0].status == "AWAITING REVIEW"
    assert len(prolific.calls_to("/studies/st1/submissions/", "GET")) == 3  # page size 2


def test_it_sends_the_token_header(prolific):
    prolific.add_submission("sub1", participant_id="pid1", study_id="st1", status="ACTIVE")
    client.list_submissions("st1")
    assert prolific.calls[0].authorization == f"Token {prolific.token}"


def test_a_wrong_token_is_a_permanent_error_that_names_the_variable(prolific, settings):
    settings.PROLIFIC_API_TOKEN = "wrong"
    with pytest.raises(client.Permanent, match=r"401.*PROLIFIC_API_TOKEN"):
        client.list_submissions("st1")


def test_a_missing_token_is_an_error_naming_the_variable(prolific, settings):
    settings.PROLIFIC_API_TOKEN = ""
    with pytest.raises(client.NotConfigured, match="PROLIFIC_API_TOKEN"):
        client.list_submissions("st1")
    assert prolific.calls == []


def test_it_approves_and_rejects_through_the_transition_endpoint(prolific):
    prolific.add_submission("good", participant_id="p1", study_id="st1", status="AWAITING REVIEW")
    prolific.add_submission("bad", participant_id="p2", study_id="st1", status="AWAITING REVIEW")

    client.approve_submission("good")
    client.reject_submission("bad", message=REJECTION_MESSAGE, rejection_category="FAILED_CHECK")

    assert prolific.submissions["good"]["status"] == "APPROVED"
    assert prolific.submissions["bad"]["status"] == "REJECTED"
    assert prolific.submissions["bad"]["rejection"]["category"] == "FAILED_CHECK"
    assert prolific.calls_to("/submissions/bad/transition/")[0].body == {
        "action": "REJECT",
        "message": REJECTION_MESSAGE,
        "rejection_category": "FAILED_CHECK",
    }


def test_it_refuses_a_short_rejection_message_before_calling_prolific(prolific):
    with pytest.raises(client.Permanent, match="100 characters"):
        client.reject_submission("bad", message="too short", rejection_category="FAILED_CHECK")
    with pytest.raises(client.Permanent, match="rejection categories"):
        client.reject_submission("bad", message=REJECTION_MESSAGE, rejection_category="BORED")
    assert prolific.calls == []


def test_it_bulk_approves_by_submission_ids_or_by_study_participants(prolific):
    for n in range(4):
        prolific.add_submission(f"s{n}", participant_id=f"p{n}", study_id="st1", status="AWAITING REVIEW")

    client.bulk_approve(submission_ids=["s0", "s1"])
    client.bulk_approve(study_id="st1", participant_ids=["p2"])

    assert [prolific.submissions[f"s{n}"]["status"] for n in range(4)] == ["APPROVED"] * 3 + ["AWAITING REVIEW"]
    assert prolific.calls_to("bulk-approve")[1].body == {"study_id": "st1", "participant_ids": ["p2"]}


def test_it_requests_a_return_with_reasons(prolific):
    prolific.add_submission("s1", participant_id="p1", study_id="st1", status="AWAITING REVIEW")
    reply = client.request_return("s1", reasons=["Withdrew consent"])
    assert reply["return_requested"]
    assert prolific.submissions["s1"]["return_reasons"] == ["Withdrew consent"]


def test_a_429_once_is_retried_after_the_servers_retry_after(prolific):
    prolific.add_submission("s1", participant_id="p1", study_id="st1", status="ACTIVE")
    prolific.fail_next(429, retry_after="0")

    assert [s.id for s in client.list_submissions("st1")] == ["s1"]
    assert len(prolific.calls) == 2


def test_a_long_retry_after_is_left_to_the_caller(prolific):
    prolific.fail_next(429, retry_after="120")
    with pytest.raises(client.Retryable) as caught:
        client.list_submissions("st1")
    assert caught.value.retry_after == 120.0
    assert caught.value.status_code == 429
    assert len(prolific.calls) == 1


def test_repeated_server_errors_end_in_a_retryable_error(prolific):
    prolific.fail_next(500, times=5, retry_after="0")
    with pytest.raises(client.Retryable, match="500"):
        client.approve_submission("s1")
    assert len(prolific.calls) == client.MAX_ATTEMPTS


def test_a_4xx_is_permanent_and_not_retried(prolific):
    prolific.add_submission("s1", participant_id="p1", study_id="st1", status="RETURNED")
    with pytest.raises(client.Permanent, match=r"400.*RETURNED"):
        client.approve_submission("s1")
    assert len(prolific.calls) == 1


def test_a_timeout_is_retryable(prolific, monkeypatch):
    monkeypatch.setattr(client, "TIMEOUT", httpx.Timeout(0.2))
    monkeypatch.setattr(client, "MAX_ATTEMPTS", 1)
    prolific.hang_next(1.0)
    with pytest.raises(client.Retryable, match="timed out"):
        client.list_submissions("st1")


def test_a_study_without_prolific_id_is_refused():
    with pytest.raises(client.Permanent, match="Prolific study id"):
        client.list_submissions("")
