"""The judging survey through its URLs with the Django test client, as a participant from Prolific."""

from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from surveys.models import Answer, Assignment, Cell, Feature, Judgment, Participant, StudyMembership
from surveys.models.freeze import freeze_lifted
from surveys.services.allocation import release_expired
from surveys.services.judging import record_demographics, record_page
from surveys.services.lifecycle import go_live
from surveys.services.participation import Event, apply_event
from surveys.services.snapshots import replace_snapshot
from tests.conftest import at_once, make_study

PID = "5f0c8a1b2c3d4e5f6a7b8c9d"
STUDY_ID = "60aa11bb22cc33dd44ee55ff"
SESSION = "70aa11bb22cc33dd44ee55ff"
DEMOGRAPHICS = {
    "gender": "Female",
    "age": "25-34",
    "religion": "No religion",
    "education": "PhD",
    "country": "United Kingdom",
}


def live_study(**kwargs):
    kwargs.setdefault("vignettes", 3)
    kwargs.setdefault("vignettes_per_participant", 2)
    kwargs.setdefault("minimum_seconds", 0)
    kwargs.setdefault("completion_code", "DONE123")
    kwargs.setdefault("failed_attention_code", "FAILATT")
    kwargs.setdefault("no_consent_code", "NOCONS")
    kwargs.setdefault("screened_out_code", "FULL999")
    return go_live(study=make_study(**kwargs))


def link(study, pid=PID, session=SESSION):
    return f"/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID={STUDY_ID}&SESSION_ID={session}"


def csrf_client():
    return Client(enforce_csrf_checks=True)


def post(client, url, data):
    """Submit a form as a browser would: with the CSRF token of the page just shown."""
    page = client.get(url)
    assert page.status_code == 200, page.content
    return client.post(url, {**data, "csrfmiddlewaretoken": page.context["csrf_token"]})


def picks(study, position="first"):
    return {q.key: position for q in study.questions.all()}


def through_demographics(client, study, *, anonymised="yes"):
    response = client.get(link(study))
    assert response.status_code == 302
    response = post(client, response.url, {"consent": "yes", "anonymised": anonymised})
    response = post(client, response.url, DEMOGRAPHICS)
    return response


def judge_all(client, study, *, alternate=True, seconds=30):
    participant = Participant.objects.get(study=study, prolific_pid=PID)
    url = client.get(f"/s/{study.slug}/").url
    position = 0
    while "/pair/" in url:
        client.get(url)
        Assignment.objects.filter(participant=participant).update(shown_at=timezone.now() - timedelta(seconds=seconds))
        side = "first" if (position % 2 == 0 or not alternate) else "second"
        response = post(client, url, picks(study, side))
        url = response.url
        position += 1
    return url


@pytest.mark.django_db
def test_a_participant_goes_from_the_prolific_link_to_the_completion_code():
    study = live_study()
    client = csrf_client()
    response = through_demographics(client, study)
    assert response.url == f"/s/{study.slug}/pair/1/"
    url = judge_all(client, study)
    assert url == f"/s/{study.slug}/check/"
    response = post(client, url, {"choice": "2"})
    assert response.url == f"/s/{study.slug}/done/"
    page = client.get(response.url)
    assert b"DONE123" in page.content
    assert b'http-equiv="refresh"' in page.content
    assert b"https://app.prolific.com/submissions/complete?cc=DONE123" in page.content

    participant = Participant.objects.get(study=study, prolific_pid=PID)
    assert participant.status == Participant.Status.COMPLETED
    assert participant.demographics["country"] == "United Kingdom"
    assert participant.session_id == SESSION
    assert participant.first_position_share == 0.5
    assert participant.seconds_total >= 60
    assert Judgment.objects.filter(assignment__participant=participant).count() == 2 * 5
    assert Judgment.objects.valid().count() == 10
    assert sum(c.completed for c in Cell.objects.filter(study=study)) == 2
    assert sum(c.reserved for c in Cell.objects.filter(study=study)) == 0


@pytest.mark.django_db
def test_every_judgment_records_the_side_shown_and_the_seconds_on_the_page():
    study = live_study()
    client = csrf_client()
    through_demographics(client, study)
    judge_all(client, study, seconds=42)
    for judgment in Judgment.objects.select_related("assignment"):
        expected = judgment.assignment.first_answer_id if judgment.winner_position == "first" else None
        if expected:
            assert judgment.winner_id == expected
        assert judgment.loser_id in (judgment.assignment.first_answer_id, judgment.assignment.second_answer_id)
        assert 42 <= judgment.seconds_on_page < 60


@pytest.mark.django_db
def test_a_pages_seconds_count_from_when_it_was_first_shown_not_from_a_reload():
    study = live_study()
    judge = csrf_client()
    through_demographics(judge, study)
    first_shown = timezone.now() - timedelta(minutes=3)
    with time_machine.travel(first_shown, tick=False):
        judge.get(f"/s/{study.slug}/pair/1/")
    judge.get(f"/s/{study.slug}/pair/1/")  # reloaded three minutes later: still counted from the first showing
    page = Assignment.objects.get(position=1)
    assert page.shown_at == first_shown
    post(judge, f"/s/{study.slug}/pair/1/", picks(study))
    page.refresh_from_db()
    assert page.seconds == pytest.approx(180, abs=5)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "params",
    [
        "",
        f"?PROLIFIC_PID=nothex&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION}",
        f"?PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}",
        f"?PROLIFIC_PID={PID}1&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION}",
    ],
)
def test_a_malformed_or_missing_prolific_link_gets_a_clear_page_and_creates_nobody(client, params):
    study = live_study()
    response = client.get(f"/s/{study.slug}/{params}")
    assert response.status_code == 400
    assert b"We could not open the study" in response.content
    assert not Participant.objects.exists()


@pytest.mark.django_db
def test_a_link_for_another_prolific_study_is_refused(client):
    study = live_study(prolific_study_id="aaaaaaaaaaaaaaaaaaaaaaaa")
    response = client.get(link(study))
    assert response.status_code == 400
    assert b"different Prolific study" in response.content


@pytest.mark.django_db
def test_a_draft_study_does_not_take_participants(client):
    study = make_study()
    response = client.get(link(study))
    assert response.status_code == 400
    assert b"not open" in response.content


@pytest.mark.django_db
def test_pages_without_a_session_say_how_to_get_back(client):
    study = live_study()
    response = client.get(f"/s/{study.slug}/pair/1/")
    assert response.status_code == 403
    assert b"open the study again" in response.content


@pytest.mark.django_db
def test_reopening_the_link_in_a_new_browser_resumes_on_the_same_page_with_the_same_pair():
    study = live_study()
    client = csrf_client()
    through_demographics(client, study)
    post(client, f"/s/{study.slug}/pair/1/", picks(study))
    first_view = client.get(f"/s/{study.slug}/pair/2/")

    other_browser = csrf_client()
    response = other_browser.get(link(study))
    assert response.url == f"/s/{study.slug}/pair/2/"
    again = other_browser.get(response.url)
    assert again.context["page"]["answers"] == first_view.context["page"]["answers"]
    assert Participant.objects.count() == 1
    assert Assignment.objects.count() == 2


@pytest.mark.django_db
def test_a_double_submit_or_the_back_button_never_duplicates_or_skips_a_page():
    study = live_study(vignettes_per_participant=3)
    client = csrf_client()
    through_demographics(client, study)
    page = client.get(f"/s/{study.slug}/pair/1/")
    data = {**picks(study), "csrfmiddlewaretoken": page.context["csrf_token"]}
    first = client.post(f"/s/{study.slug}/pair/1/", data)
    second = client.post(f"/s/{study.slug}/pair/1/", {**data, **picks(study, "second")})  # back button, resubmit
    assert first.url == second.url == f"/s/{study.slug}/pair/2/"
    assert Judgment.objects.count() == 5
    assert set(Judgment.objects.values_list("winner_position", flat=True)) == {"first"}
    # Asking for a later page than the current one lands on the current one.
    assert client.get(f"/s/{study.slug}/pair/3/").url == f"/s/{study.slug}/pair/2/"
    assert client.post(f"/s/{study.slug}/pair/3/", data).url == f"/s/{study.slug}/pair/2/"
    assert Judgment.objects.count() == 5


@pytest.mark.django_db
def test_a_page_with_an_unanswered_question_is_shown_again_and_saves_nothing():
    study = live_study()
    client = csrf_client()
    through_demographics(client, study)
    data = picks(study)
    data.pop("reasons")
    response = post(client, f"/s/{study.slug}/pair/1/", data)
    assert response.status_code == 200
    assert b"Please choose Answer A or Answer B." in response.content
    assert b"checked" in response.content  # what was answered stays answered
    assert not Judgment.objects.exists()


@pytest.mark.django_db
def test_nothing_is_preselected_on_a_judging_page():
    study = live_study()
    client = csrf_client()
    through_demographics(client, study)
    page = client.get(f"/s/{study.slug}/pair/1/")
    assert b"checked" not in page.content
    assert page.content.count(b'type="radio"') == 10


@pytest.mark.django_db
def test_someone_elses_page_is_not_found():
    study = live_study()
    client = csrf_client()
    through_demographics(client, study)
    assert client.get(f"/s/{study.slug}/pair/9/").status_code == 404
    other = live_study(slug="s2")
    assert client.get(f"/s/{other.slug}/pair/1/").status_code == 403


@pytest.mark.django_db
def test_forms_are_refused_without_the_csrf_token():
    study = live_study()
    client = csrf_client()
    client.get(link(study))
    response = client.post(f"/s/{study.slug}/consent/", {"consent": "yes", "anonymised": "yes"})
    assert response.status_code == 403
    assert Participant.objects.get().status == Participant.Status.STARTED


@pytest.mark.django_db
def test_answers_are_shown_as_text_never_as_markup():
    study = live_study()
    with freeze_lifted():  # a data fix, shown from the replaced snapshot
        Answer.objects.update(action="<script>alert('x')</script> do <b>this</b>")
        Feature.objects.update(reason="<img src=x onerror=alert(1)>")
    replace_snapshot(study=study)
    client = csrf_client()
    through_demographics(client, study)
    participant = Participant.objects.get()
    html = b""
    for assignment in participant.assignments.all():
        html += client.get(f"/s/{study.slug}/pair/{assignment.position}/").content
        post(client, f"/s/{study.slug}/pair/{assignment.position}/", picks(study))
    assert b"&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; do &lt;b&gt;this&lt;/b&gt;" in html
    assert b"&lt;img src=x onerror=alert(1)&gt;" in html
    assert b"<script>alert" not in html
    assert b"<img src=x" not in html


@pytest.mark.django_db
def test_declining_consent_ends_politely_with_the_no_consent_code():
    study = live_study()
    client = csrf_client()
    response = client.get(link(study))
    response = post(client, response.url, {"consent": "no"})
    page = client.get(response.url)
    assert b"Thank you for considering" in page.content
    assert b"cc=NOCONS" in page.content
    assert Participant.objects.get().status == Participant.Status.NO_CONSENT
    assert not Assignment.objects.exists()
    assert client.get(f"/s/{study.slug}/consent/").url == f"/s/{study.slug}/done/"


@pytest.mark.django_db
def test_no_consent_to_anonymised_use_finishes_but_is_excluded_and_reopens_the_cells():
    study = live_study()
    client = csrf_client()
    through_demographics(client, study, anonymised="no")
    post(client, judge_all(client, study), {"choice": "2"})
    participant = Participant.objects.get()
    assert participant.status == Participant.Status.COMPLETED
    assert participant.exclusion == Participant.Exclusion.NO_ANONYMISED_CONSENT
    assert sum(c.completed for c in Cell.objects.filter(study=study)) == 0
    assert Judgment.objects.count() == 10
    assert Judgment.objects.valid().count() == 0


@pytest.mark.django_db
def test_a_failed_attention_check_gets_its_own_code_and_reopens_the_cells():
    study = live_study()
    client = csrf_client()
    through_demographics(client, study)
    response = post(client, judge_all(client, study), {"choice": "1"})
    page = client.get(response.url)
    assert b"cc=FAILATT" in page.content
    participant = Participant.objects.get()
    assert participant.status == Participant.Status.FAILED_ATTENTION
    assert participant.exclusion == Participant.Exclusion.FAILED_ATTENTION
    assert sum(c.completed for c in Cell.objects.filter(study=study)) == 0


@pytest.mark.django_db
def test_straight_lining_and_speed_are_flagged_with_reasons():
    study = live_study(minimum_seconds=100)
    client = csrf_client()
    through_demographics(client, study)
    post(client, judge_all(client, study, alternate=False, seconds=10), {"choice": "2"})
    participant = Participant.objects.get()
    codes = [flag["code"] for flag in participant.flags]
    assert codes == ["straight-lining", "too-fast"]
    assert participant.exclusion == "straight-lining"
    assert participant.first_position_share == 1.0
    assert "under the study's minimum of 100 s" in participant.flags[1]["reason"]


@pytest.mark.django_db
@pytest.mark.parametrize(("others", "cached_from", "kept_before"), [(5, 10_000, None), (6, 6, None), (0, 6, 1000.0)])
def test_a_judge_far_faster_than_the_studys_median_is_flagged_with_it(others, cached_from, kept_before, monkeypatch):
    from django.core.cache import cache

    from surveys.services import timing

    study = live_study()
    times = [(1000.0, "completed"), (900.0, "failed-attention"), (1100.0, "completed")] + [(1000.0, "completed")] * 3
    Participant.objects.bulk_create(  # the median is 1000 s; previews and the unfinished never count
        Participant(study=study, prolific_pid=f"other{n}", status=status, seconds_total=seconds)
        for n, (seconds, status) in enumerate(times[:others])
    )
    Participant.objects.create(
        study=study, prolific_pid="preview", status="completed", seconds_total=1, is_preview=True
    )
    monkeypatch.setattr(timing, "CACHED_FROM", cached_from)
    if kept_before is not None:  # a large study's median, kept by this process
        cache.set(f"surveys:median-seconds:{study.pk}", kept_before)
    client = csrf_client()
    through_demographics(client, study)
    try:
        post(client, judge_all(client, study, seconds=30), {"choice": "2"})
        participant = Participant.objects.get(prolific_pid=PID)
        assert [flag["code"] for flag in participant.flags] == ["too-fast"]
        assert "of the median 1000 s" in participant.flags[0]["reason"]
        assert participant.status == Participant.Status.COMPLETED
        assert participant.exclusion == "too-fast"
        assert sum(c.completed for c in Cell.objects.filter(study=study)) == 0  # its places reopened
        kept = cache.get(f"surveys:median-seconds:{study.pk}")
        assert kept == (1000.0 if others >= cached_from or kept_before else None)
    finally:
        cache.clear()


@pytest.mark.django_db
def test_a_finished_participant_gets_the_completion_page_again_never_new_work():
    study = live_study()
    client = csrf_client()
    through_demographics(client, study)
    post(client, judge_all(client, study), {"choice": "2"})
    response = csrf_client().get(link(study))
    assert response.url == f"/s/{study.slug}/done/"
    assert client.get(f"/s/{study.slug}/pair/1/").url == f"/s/{study.slug}/done/"
    assert client.get(f"/s/{study.slug}/check/").url == f"/s/{study.slug}/done/"
    assert Assignment.objects.count() == 2


@pytest.mark.django_db
def test_a_full_study_tells_the_participant_to_return_it():
    study = live_study(systems=("alpha", "beta"), vignettes=2, vignettes_per_participant=2, repetitions=1)
    second = csrf_client()  # arrives while there is room; the study fills before their demographics
    response = second.get(link(study, pid="aaaaaaaaaaaaaaaaaaaaaaab", session="bbbbbbbbbbbbbbbbbbbbbbbb"))
    response = post(second, response.url, {"consent": "yes", "anonymised": "yes"})
    first = csrf_client()
    through_demographics(first, study)
    response = post(second, response.url, DEMOGRAPHICS)
    page = second.get(response.url)
    assert b"the study is full" in page.content
    assert b"return the study" in page.content or b"Go back to Prolific" in page.content
    assert b"cc=FULL999" in page.content
    assert Participant.objects.get(prolific_pid="aaaaaaaaaaaaaaaaaaaaaaab").status == "screened-out"


@pytest.mark.django_db
def test_a_participant_whose_time_ran_out_gets_a_clear_page():
    study = live_study(reservation_minutes=30)
    client = csrf_client()
    through_demographics(client, study)
    with time_machine.travel(timezone.now() + timedelta(minutes=31)):
        release_expired()
        response = client.get(f"/s/{study.slug}/pair/1/")
        page = client.get(response.url)
    assert b"time for this study ran out" in page.content


@pytest.mark.django_db
def test_a_returned_participant_is_not_given_work_again():
    study = live_study()
    client = csrf_client()
    through_demographics(client, study)
    apply_event(participant=Participant.objects.get(), event=Event.RETURNED)
    response = client.get(link(study))
    assert b"returned or timed out" in client.get(response.url).content


@pytest.mark.django_db
def test_a_staff_preview_goes_through_without_touching_cells_or_analysis():
    study = live_study()
    staff = get_user_model().objects.create_user("res", password="pw", is_staff=True)
    StudyMembership.objects.create(study=study, user=staff, role=StudyMembership.Role.VIEWER)  # on its team
    client = csrf_client()
    client.force_login(staff)
    response = client.get(f"/s/{study.slug}/")
    response = post(client, response.url, {"consent": "yes", "anonymised": "yes"})
    assert b"Researcher preview" in client.get(response.url).content
    response = post(client, response.url, DEMOGRAPHICS)
    while "/pair/" in response.url:
        response = post(client, response.url, picks(study))
    response = post(client, response.url, {"choice": "2"})
    page = client.get(response.url)
    assert b"Preview" in page.content
    assert b'http-equiv="refresh"' not in page.content
    assert Participant.objects.get().is_preview
    assert all(c.completed == 0 and c.reserved == 0 for c in Cell.objects.filter(study=study))
    assert Judgment.objects.count() == 10
    assert Judgment.objects.valid().count() == 0


@pytest.mark.django_db
def test_only_get_and_post_are_allowed(client):
    study = live_study()
    client.get(link(study))
    assert client.put(f"/s/{study.slug}/consent/").status_code == 405
    assert client.post(f"/s/{study.slug}/done/").status_code == 405


@pytest.mark.django_db
def test_only_staff_can_start_a_preview():
    study = live_study()
    client = csrf_client()
    through_demographics(client, study)
    response = client.get(f"/s/{study.slug}/?restart=1")
    assert response.url == f"/s/{study.slug}/pair/1/"  # resumes their own place instead
    assert not Participant.objects.filter(is_preview=True).exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_same_page_submitted_from_two_tabs_at_once_is_recorded_once():
    study = live_study()
    client = csrf_client()
    through_demographics(client, study)
    participant = Participant.objects.get()
    page = participant.assignments.get(position=1)
    outcomes = at_once(
        *[lambda: record_page(participant=participant, assignment=page, picks=picks(study)) for _ in range(4)]
    )
    assert outcomes == [None] * 4
    assert Judgment.objects.count() == 5
    cell = Cell.objects.get(pk=page.cell_id)
    assert (cell.completed, cell.reserved) == (1, 0)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_demographics_sent_twice_at_once_allocate_one_set_of_pages():
    study = live_study()
    client = csrf_client()
    response = client.get(link(study))
    post(client, response.url, {"consent": "yes", "anonymised": "yes"})
    participant = Participant.objects.get()
    outcomes = at_once(
        *[lambda: record_demographics(participant=participant, demographics=DEMOGRAPHICS) for _ in range(4)]
    )
    assert outcomes == [None] * 4
    assert Assignment.objects.count() == 2
    assert sum(c.reserved for c in Cell.objects.filter(study=study)) == 2
    assert Participant.objects.get().status == Participant.Status.JUDGING
