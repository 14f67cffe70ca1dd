"""What low authenticity changes: selection needs a recorded confirmation; Prolific writers may be asked to return."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from surveys.models import Answer, AuditEvent, Respondent, Study
from surveys.prolific.writer_returns import RETURN_REASON, ask_writers_to_return
from surveys.services.answer_records import select_answer
from tests.surveys.test_authenticity import copied_from_the_llm, pasted_everything, written
from tests.surveys.test_respondents import answer_post, answering_study


@pytest.fixture
def low_answer(client, db) -> Answer:
    study = answering_study(vignettes=1, m=1, prolific_study_id="st1")
    post = copied_from_the_llm(study)
    return written(client, study, "5f1e0c7a9b3d2e4f6a8b0c10", post, pasted_everything(post))


def test_a_low_authenticity_answer_is_not_selected_without_a_confirmation(low_answer, admin_user):
    assert low_answer.authenticity == "low"
    assert not low_answer.selected  # survey answers are never selected by themselves
    with pytest.raises(ValidationError, match="confirm that you select it anyway"):
        select_answer(answer=low_answer, user=admin_user)
    low_answer.refresh_from_db()
    assert not low_answer.selected


def test_the_side_by_side_page_asks_for_the_confirmation_and_records_who_gave_it(client, low_answer, admin_user):
    client.force_login(admin_user)
    study = low_answer.vignette.study
    url = reverse("admin:surveys_study_select_answer", args=[study.pk, low_answer.pk])
    page = client.get(reverse("admin:surveys_study_answers", args=[study.pk])).content.decode()
    assert 'name="confirm_low_authenticity"' in page
    refused = client.post(url, follow=True).content.decode()
    assert "confirm that you select it anyway" in refused
    low_answer.refresh_from_db()
    assert not low_answer.selected
    client.post(url, {"confirm_low_authenticity": "yes"})
    low_answer.refresh_from_db()
    assert low_answer.selected
    assert low_answer.low_authenticity_confirmed_by == admin_user
    assert low_answer.low_authenticity_confirmed_at is not None
    page = client.get(reverse("admin:surveys_study_answers", args=[study.pk])).content.decode()
    assert f"Selected despite low authenticity, confirmed by {admin_user}" in page


def test_a_typed_answer_is_selected_without_any_confirmation(client, db, admin_user):
    study = answering_study(vignettes=1, m=1)
    answer = written(client, study, "5f1e0c7a9b3d2e4f6a8b0c11", answer_post())
    assert answer.authenticity == "unknown"
    select_answer(answer=answer, user=admin_user)
    assert answer.selected


def on_prolific(prolific, respondent, *, slug: str | None = None, pid: str | None = None) -> None:
    """The writers' Prolific study, whose link opens the study's answer-writing page (or `slug`'s), and the writer's
    submission in it (as `pid`'s)."""
    url = reverse("surveys:answering-entry", args=[slug or respondent.study.slug])
    prolific.add_study(respondent.prolific_study_id, status="ACTIVE", external_study_url=f"https://mj.example{url}")
    prolific.add_submission(respondent.session_id, participant_id=pid or respondent.prolific_pid,
                            study_id=respondent.prolific_study_id, status="AWAITING REVIEW")  # fmt: skip


def test_low_authenticity_writers_are_asked_to_return_with_the_reason_once(low_answer, prolific, admin_user):
    respondent = Respondent.objects.get()
    on_prolific(prolific, respondent)

    lines = ask_writers_to_return(respondents=Respondent.objects.all(), user=admin_user)

    calls = prolific.calls_to("request-return")
    assert [call.body for call in calls] == [{"request_return_reasons": [RETURN_REASON]}]
    assert lines == [f"Asked {respondent} to return the submission ({RETURN_REASON})."]
    respondent.refresh_from_db()
    assert respondent.return_requested_at is not None
    assert f"by {admin_user}" in respondent.return_request
    event = AuditEvent.objects.get(action=AuditEvent.Action.WRITERS_ASKED_TO_RETURN)  # they go unpaid: audited
    assert (event.user, event.details["writers"]) == (admin_user, [respondent.prolific_pid])
    ask_writers_to_return(respondents=Respondent.objects.all())
    assert len(prolific.calls_to("request-return")) == 1  # asked once


def test_under_the_approve_policy_no_writer_is_asked_to_return(low_answer, prolific):
    Study.objects.update(invalid_policy=Study.InvalidPolicy.APPROVE)
    lines = ask_writers_to_return(respondents=Respondent.objects.all())
    assert prolific.calls_to("request-return") == []
    assert "approves invalid submissions" in lines[0]


def test_writers_without_a_low_answer_are_never_asked(client, db, prolific):
    study = answering_study(vignettes=1, m=1)
    written(client, study, "5f1e0c7a9b3d2e4f6a8b0c11", answer_post())
    lines = ask_writers_to_return(respondents=Respondent.objects.all())
    assert prolific.calls_to("request-return") == []
    assert lines == ["None of the chosen writers has a low-authenticity answer still to act on."]


def test_the_respondent_admin_offers_the_return_request_as_an_action(client, low_answer, admin_user, prolific):
    respondent = Respondent.objects.get()
    on_prolific(prolific, respondent)
    client.force_login(admin_user)
    response = client.post(
        reverse("admin:surveys_respondent_changelist"),
        {"action": "ask_to_return", "_selected_action": [respondent.pk]},
        follow=True,
    )
    assert f"Asked {respondent} to return the submission" in response.content.decode()


def test_the_respondents_page_shows_the_rating_of_each_answer_written(client, low_answer, admin_user):
    client.force_login(admin_user)
    respondent = Respondent.objects.get()
    html = client.get(reverse("admin:surveys_respondent_change", args=[respondent.pk])).content.decode()
    assert "Authenticity" in html
    assert ">Low<" in html


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("someone else's submission", "as another participant's or another study's"),
        ("a Prolific study that opens another study's page", "does not open this study's answer-writing page"),
        ("another study's Prolific study", "belongs to another study"),
    ],
)
def test_a_writer_whose_link_names_another_teams_prolific_submission_is_never_asked_to_return(
    low_answer, prolific, admin_user, case, said
):
    """Issue 35: a writer's STUDY_ID and SESSION_ID are whatever their link said, and the deployment's one token
    reaches every team's Prolific studies. A link naming another team's submission (or study) is found out on
    Prolific before anything is sent: nobody is asked to return, nothing is recorded as asked."""
    from tests.conftest import make_study

    respondent = Respondent.objects.get()
    if case == "someone else's submission":
        on_prolific(prolific, respondent, pid="5f1e0c7a9b3d2e4f6a8bffff")
    elif case == "a Prolific study that opens another study's page":
        on_prolific(prolific, respondent, slug="victim")
    else:
        on_prolific(prolific, respondent)
        make_study(slug="victim", prolific_study_id=respondent.prolific_study_id)
    lines = ask_writers_to_return(respondents=Respondent.objects.all(), user=admin_user)
    assert prolific.calls_to("request-return") == []
    assert len(lines) == 1
    assert "not asked" in lines[0]
    assert said in lines[0]
    respondent.refresh_from_db()
    assert respondent.return_requested_at is None
    assert not AuditEvent.objects.filter(action=AuditEvent.Action.WRITERS_ASKED_TO_RETURN).exists()
