"""Reviewing submissions on Prolific: bulk approval, the study's policy, and Prolific's rules."""

import pytest

from surveys.models import Participant, Study
from surveys.prolific import decide_review, review_submissions
from tests.conftest import make_study

S, X = Participant.Status, Participant.Exclusion


def submission(study, prolific, name, *, status=S.COMPLETED, exclusion="", on_prolific="AWAITING REVIEW"):
    """A participant who finished with us, and their submission on the fake Prolific."""
    participant = Participant.objects.create(
        study=study, prolific_pid=f"pid-{name}", session_id=f"sub-{name}", status=status, exclusion=exclusion
    )
    prolific.add_submission(f"sub-{name}", participant_id=f"pid-{name}", study_id="st1", status=on_prolific)
    return participant


def review_status(name):
    return Participant.objects.get(prolific_pid=f"pid-{name}").review_status


@pytest.fixture
def study(db):
    return make_study(prolific_study_id="st1", estimated_minutes=20, invalid_policy=Study.InvalidPolicy.REJECT)


def test_valid_submissions_are_approved_in_one_bulk_call(study, prolific):
    for name in ("a", "b", "c"):
        submission(study, prolific, name)

    report = review_submissions(study=study)

    bulk = prolific.calls_to("bulk-approve")
    assert len(bulk) == 1
    assert sorted(bulk[0].body["submission_ids"]) == ["sub-a", "sub-b", "sub-c"]
    assert report.approved == 3
    assert all(prolific.submissions[f"sub-{n}"]["status"] == "APPROVED" for n in "abc")
    assert {review_status(n) for n in "abc"} == {"approved"}
    assert Participant.objects.get(prolific_pid="pid-a").prolific_status == "APPROVED"


def test_an_exceptionally_fast_submission_is_rejected_with_prolifics_category(study, prolific):
    submission(study, prolific, "fast", exclusion=X.TOO_FAST)

    report = review_submissions(study=study)

    assert report.rejected == 1
    rejected = prolific.submissions["sub-fast"]
    assert rejected["status"] == "REJECTED"
    assert rejected["rejection"]["category"] == "TOO_QUICKLY"
    assert len(rejected["rejection"]["message"]) >= 100
    assert review_status("fast") == "rejected"


def test_straight_lining_is_rejected_as_low_effort(study, prolific):
    submission(study, prolific, "lines", exclusion=X.STRAIGHT_LINING)
    review_submissions(study=study)
    assert prolific.submissions["sub-lines"]["rejection"]["category"] == "LOW_EFFORT"


def test_one_failed_attention_check_is_not_rejected_in_a_20_minute_study(study, prolific):
    submission(study, prolific, "attn", status=S.FAILED_ATTENTION, exclusion=X.FAILED_ATTENTION)

    report = review_submissions(study=study)

    assert report.rejected == 0
    assert report.returns_requested == 1
    assert prolific.calls_to("/transition/") == []
    assert prolific.submissions["sub-attn"]["return_reasons"] == ["Did not pass the attention check"]
    assert review_status("attn") == "return-requested"
    assert any("under 5 minutes" in m for m in report.messages)


def test_one_failed_attention_check_may_be_rejected_in_a_study_under_5_minutes(study, prolific):
    study.estimated_minutes = 4
    study.save()
    submission(study, prolific, "attn", status=S.FAILED_ATTENTION, exclusion=X.FAILED_ATTENTION)

    review_submissions(study=study)

    assert prolific.submissions["sub-attn"]["rejection"]["category"] == "FAILED_CHECK"


def test_screened_out_participants_are_never_rejected(study, prolific):
    submission(study, prolific, "full", status=S.SCREENED_OUT)

    review_submissions(study=study)

    assert prolific.calls_to("/transition/") == []
    assert prolific.submissions["sub-full"]["status"] == "AWAITING REVIEW"
    assert prolific.submissions["sub-full"]["return_requested"]
    assert review_status("full") == "return-requested"


def test_no_consent_is_never_rejected(study, prolific):
    submission(study, prolific, "nc", status=S.NO_CONSENT)
    submission(study, prolific, "anon", exclusion=X.NO_ANONYMISED_CONSENT)
    review_submissions(study=study)
    assert prolific.calls_to("/transition/") == []
    assert prolific.submissions["sub-nc"]["return_reasons"] == ["Withdrew consent"]
    assert prolific.submissions["sub-anon"]["return_reasons"] == ["Withdrew consent"]


def test_the_ask_return_policy_asks_instead_of_rejecting(study, prolific):
    study.invalid_policy = Study.InvalidPolicy.ASK_RETURN
    study.save()
    submission(study, prolific, "fast", exclusion=X.TOO_FAST)
    submission(study, prolific, "ok")

    report = review_submissions(study=study)

    assert (report.approved, report.rejected, report.returns_requested) == (1, 0, 1)
    assert prolific.submissions["sub-fast"]["return_reasons"] == ["Completed the study exceptionally fast"]


def test_the_approve_policy_pays_everyone_in_one_bulk_call(study, prolific):
    study.invalid_policy = Study.InvalidPolicy.APPROVE
    study.save()
    submission(study, prolific, "fast", exclusion=X.TOO_FAST)
    submission(study, prolific, "full", status=S.SCREENED_OUT)
    submission(study, prolific, "ok")

    report = review_submissions(study=study)

    assert report.approved == 3
    assert len(prolific.calls_to("/submissions/")) == 1  # the bulk call only
    # Approved but still excluded from the analysis:
    assert Participant.objects.get(prolific_pid="pid-fast").exclusion == X.TOO_FAST


def test_a_second_review_makes_no_further_calls(study, prolific):
    submission(study, prolific, "ok")
    submission(study, prolific, "fast", exclusion=X.TOO_FAST)
    submission(study, prolific, "attn", status=S.FAILED_ATTENTION, exclusion=X.FAILED_ATTENTION)
    submission(study, prolific, "full", status=S.SCREENED_OUT)
    review_submissions(study=study)
    calls = len(prolific.calls)

    report = review_submissions(study=study)

    assert len(prolific.calls) == calls
    assert report.calls == 0
    assert "nothing left to review" in report.messages[0]


def test_submissions_not_awaiting_review_on_prolific_are_left_alone(study, prolific):
    submission(study, prolific, "still-active", on_prolific="ACTIVE")
    submission(study, prolific, "returned", exclusion=X.TOO_FAST, on_prolific="RETURNED")

    report = review_submissions(study=study)

    assert report.calls == 0
    assert prolific.calls_to("/submissions/") == []
    assert review_status("still-active") == ""
    returned = Participant.objects.get(prolific_pid="pid-returned")
    assert returned.prolific_status == "RETURNED"
    assert returned.status == S.RETURNED


def test_a_prolific_failure_leaves_the_submission_for_the_next_review(study, prolific):
    submission(study, prolific, "ok")
    review_submissions(study=study)
    submission(study, prolific, "later")
    prolific.fail_next(500, retry_after="0", path="/studies/")  # the list fails once and is retried inline
    prolific.fail_next(500, times=3, retry_after="0", path="bulk-approve")

    report = review_submissions(study=study)

    assert report.failed == 1
    assert report.approved == 0
    assert review_status("later") == ""
    assert any("failed" in m for m in report.messages)
    again = review_submissions(study=study)
    assert again.approved == 1
    assert review_status("later") == "approved"


def test_a_study_without_a_prolific_id_is_not_reviewed(study, prolific):
    study.prolific_study_id = ""
    study.save()
    submission(study, prolific, "ok")
    report = review_submissions(study=study)
    assert report.calls == 0
    assert "no Prolific study id" in report.messages[0]


def test_preview_participants_are_never_sent_to_prolific(study, prolific):
    Participant.objects.create(study=study, prolific_pid="preview", session_id="", status=S.COMPLETED, is_preview=True)
    report = review_submissions(study=study)
    assert report.calls == 0
    assert prolific.calls == []


@pytest.mark.parametrize(
    ("status", "exclusion", "minutes", "action"),
    [
        (S.COMPLETED, "", 20, "approve"),
        (S.COMPLETED, X.TOO_FAST, 20, "reject"),
        (S.FAILED_ATTENTION, X.FAILED_ATTENTION, 20, "request-return"),
        (S.FAILED_ATTENTION, X.FAILED_ATTENTION, 4, "reject"),
        (S.SCREENED_OUT, "", 4, "request-return"),
        (S.COMPLETED, X.RESEARCHER, 4, "request-return"),
    ],
)
def test_the_decision_under_the_reject_policy(study, status, exclusion, minutes, action):
    study.estimated_minutes = minutes
    participant = Participant(study=study, prolific_pid="p", status=status, exclusion=exclusion)
    assert decide_review(participant=participant, study=study).action == action


def test_when_prolific_cannot_be_read_nothing_is_reviewed_and_the_error_is_reported(study, prolific):
    submission(study, prolific, "ok")
    prolific.fail_next(503, times=3, retry_after="0")

    report = review_submissions(study=study)

    assert report.calls == 0
    assert "503" in report.messages[-1]
    assert review_status("ok") == ""


def test_every_flag_counts_not_only_the_first(study, prolific):
    # Failed attention (not rejectable in 20 minutes) first, then exceptionally fast (rejectable).
    participant = submission(study, prolific, "both", status=S.FAILED_ATTENTION, exclusion=X.FAILED_ATTENTION)
    participant.flags = [
        {"code": "failed-attention", "reason": "chose option 1"},
        {"code": "too-fast", "reason": "judged in 30 s, under 30% of the median 400 s"},
    ]
    participant.save()

    review_submissions(study=study)

    assert prolific.submissions["sub-both"]["rejection"]["category"] == "TOO_QUICKLY"


def test_withdrawn_consent_outweighs_other_flags(study, prolific):
    participant = submission(study, prolific, "nc-fast", exclusion=X.NO_ANONYMISED_CONSENT)
    participant.flags = [{"code": "no-anonymised-consent", "reason": "-"}, {"code": "too-fast", "reason": "-"}]
    participant.save()
    review_submissions(study=study)
    assert prolific.calls_to("/transition/") == []
    assert prolific.submissions["sub-nc-fast"]["return_reasons"] == ["Withdrew consent"]
