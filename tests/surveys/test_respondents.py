"""The answer-writing survey: services and pages, through URLs with the Django test client."""

import random
from collections import Counter
from functools import partial

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from surveys.models import Answer, Invitation, Respondent, RespondentTask, Study, System
from surveys.services.answer_records import create_answer
from surveys.services.answer_shape import FeatureIn
from surveys.services.errors import StudyClosed
from surveys.services.respondent_survey import (
    assign_vignettes,
    create_invitation,
    record_consent,
    start_prolific_respondent,
    submit_answer,
)
from surveys.services.snapshots import write_snapshot
from tests.conftest import at_once, make_study

PID = "5f1e0c7a9b3d2e4f6a8b0c1d"
STUDY_ID = "60a1b2c3d4e5f60718293a4b"
SESSION_ID = "6123456789abcdef01234567"


def hexid(n: int) -> str:
    return f"{n:024x}"


def answering_study(*, vignettes=4, m=3, **design) -> Study:
    """An LLM system with answers everywhere, a lay human system without any, and an expert system."""
    study = make_study(systems=("gpt",), vignettes=vignettes, reference="gpt", answers_per_respondent=m, **design)
    System.objects.filter(study=study, key="gpt").update(kind="llm", provider="openai", model="gpt-4o")
    System.objects.create(study=study, key="lay", label="Lay people", kind="human", position=1)
    System.objects.create(study=study, key="phil", label="Philosophers", kind="expert", position=2)
    return study


def entry(study: Study, pid: str = PID, session: str = SESSION_ID) -> str:
    url = reverse("surveys:answering-entry", args=[study.slug])
    return f"{url}?PROLIFIC_PID={pid}&STUDY_ID={STUDY_ID}&SESSION_ID={session}"


def page(study: Study, position: int) -> str:
    return reverse("surveys:answering-write", args=[study.slug, position])


def answer_post(**overrides) -> dict:
    data = {
        "feature_1": "Honesty",
        "weight_1": "60",
        "reason_1": "Lying to a friend breaks trust.",
        "feature_2": "Harm",
        "weight_2": "40",
        "reason_2": "The truth could hurt.",
        "action": "Tell the truth, kindly.",
        "additional_information": "How close are they?",
    }
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


def consented(client, study: Study, pid: str = PID):
    client.get(entry(study, pid=pid))
    return client.post(reverse("surveys:answering-consent", args=[study.slug]), {"agree": "yes"})


def start(study: Study, n: int) -> Respondent:
    respondent = start_prolific_respondent(
        study=study, prolific_pid=hexid(n), prolific_study_id=STUDY_ID, session_id=hexid(10_000 + n)
    )
    return record_consent(respondent=respondent, agreed=True)


# Services


@pytest.mark.django_db
def test_vignettes_are_spread_evenly_across_respondents():
    study = answering_study(vignettes=4, m=3)
    for n in range(8):
        start(study, n)
    per_vignette = Counter(RespondentTask.objects.values_list("vignette__key", flat=True))
    assert per_vignette == {"v1": 6, "v2": 6, "v3": 6, "v4": 6}


@pytest.mark.django_db
def test_the_vignettes_with_fewest_answers_for_the_system_come_first():
    study = answering_study(vignettes=4, m=2)
    lay = study.systems.get(key="lay")
    for vignette in study.vignettes.filter(key__in=["v1", "v2"]):
        create_answer(system=lay, vignette=vignette, features=[FeatureIn(feature="harm", weight=100)], action="act")
    respondent = start(study, 1)
    assert {t.vignette.key for t in respondent.tasks.all()} == {"v3", "v4"}
    assert respondent.status == Respondent.Status.WRITING


@pytest.mark.django_db
def test_ties_are_broken_at_random():
    study = answering_study(vignettes=4, m=1)
    respondent = start_prolific_respondent(
        study=study, prolific_pid=PID, prolific_study_id=STUDY_ID, session_id=SESSION_ID
    )
    picks = set()
    for seed in range(20):
        RespondentTask.objects.filter(respondent=respondent).delete()
        picks.add(assign_vignettes(respondent=respondent, rng=random.Random(seed))[0].vignette_id)
    assert len(picks) > 1


@pytest.mark.django_db
def test_assigning_twice_keeps_the_first_pages():
    study = answering_study()
    respondent = start(study, 1)
    first = [(t.position, t.vignette_id) for t in respondent.tasks.all()]
    again = assign_vignettes(respondent=respondent)
    assert [(t.position, t.vignette_id) for t in again] == first


@pytest.mark.django_db
def test_a_submitted_answer_is_an_answer_of_the_respondents_system_with_the_next_free_sample():
    study = answering_study(m=1)
    lay = study.systems.get(key="lay")
    respondent = start(study, 1)
    task = respondent.tasks.get()
    create_answer(
        system=lay, vignette=task.vignette, features=[FeatureIn(feature="harm", weight=100)], action="imported"
    )
    submit_answer(
        task=task,
        features=[FeatureIn(feature="honesty", weight=70, reason="trust"), FeatureIn(feature="harm", weight=30)],
        action="Tell",
    )
    task.refresh_from_db()
    assert task.answer.system == lay
    assert task.answer.origin == Answer.Origin.RESPONDENT
    assert task.answer.sample == 2
    assert [(f.feature, f.weight, f.reason) for f in task.answer.features.all()] == [
        ("honesty", 70, "trust"),
        ("harm", 30, ""),
    ]
    respondent.refresh_from_db()
    assert respondent.status == Respondent.Status.COMPLETED
    assert respondent.finished_at is not None


@pytest.mark.django_db
def test_submitting_a_page_twice_stores_one_answer():
    study = answering_study(m=2)
    task = start(study, 1).tasks.first()
    for _ in range(2):
        submit_answer(task=task, features=[FeatureIn(feature="harm", weight=100)], action="act")
    assert Answer.objects.filter(origin=Answer.Origin.RESPONDENT).count() == 1


@pytest.mark.django_db
def test_the_service_rejects_weights_that_do_not_add_to_100():
    from django.core.exceptions import ValidationError

    study = answering_study(m=1)
    task = start(study, 1).tasks.get()
    with pytest.raises(ValidationError, match="weights sum to 90"):
        submit_answer(task=task, features=[FeatureIn(feature="harm", weight=90)], action="act")
    assert not Answer.objects.filter(origin=Answer.Origin.RESPONDENT).exists()


@pytest.mark.django_db
def test_an_invitation_is_only_for_an_expert_system_of_its_study():
    from django.core.exceptions import ValidationError

    study = answering_study()
    with pytest.raises(ValidationError, match="not an expert system"):
        create_invitation(study=study, system=study.systems.get(key="lay"))
    other = make_study(slug="other", systems=("x",))
    with pytest.raises(ValidationError, match="belongs to another study"):
        create_invitation(study=other, system=study.systems.get(key="phil"))
    invitation = create_invitation(study=study, system=study.systems.get(key="phil"), label="Prof. X")
    assert len(invitation.token) >= 32


@pytest.mark.django_db
def test_a_closed_study_takes_no_new_respondents():
    study = answering_study()
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED, snapshot=write_snapshot(study=study))
    study.refresh_from_db()
    with pytest.raises(StudyClosed, match="closed"):
        start_prolific_respondent(study=study, prolific_pid=PID, prolific_study_id=STUDY_ID, session_id=SESSION_ID)


# Pages


@pytest.mark.django_db
def test_a_closed_study_sends_a_prolific_writer_back_with_the_answer_writing_full_code(client):
    study = answering_study(screened_out_code="JUDGEFULL", answering_full_code="WFULL")
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED, snapshot=write_snapshot(study=study))
    response = client.get(entry(study))
    assert response.status_code == 410
    assert 'href="https://app.prolific.com/submissions/complete?cc=WFULL"' in response.content.decode()
    assert not Respondent.objects.exists()


@pytest.mark.django_db
def test_without_answer_writing_codes_a_writer_is_not_given_the_judging_code(client):
    study = answering_study(m=1, completion_code="JUDGED")
    client.get(entry(study))
    client.post(reverse("surveys:answering-consent", args=[study.slug]), {"agree": "yes"})
    client.post(page(study, 1), answer_post())
    response = client.get(reverse("surveys:answering-done", args=[study.slug]))
    assert response.status_code == 200
    assert "JUDGED" not in response.content.decode()


@pytest.mark.django_db
def test_the_way_through_ends_at_prolific_with_answer_writings_own_completion_code(client):
    study = answering_study(m=2, completion_code="JUDGED", answering_completion_code="C1A2B3")
    response = client.get(entry(study))
    assert response.status_code == 302
    assert response.url == reverse("surveys:answering-consent", args=[study.slug])
    response = client.post(response.url, {"agree": "yes"})
    assert response.url == page(study, 1)
    assert client.get(page(study, 1)).status_code == 200
    assert client.post(page(study, 1), answer_post()).url == page(study, 2)
    response = client.post(page(study, 2), answer_post())
    assert response.url == reverse("surveys:answering-done", args=[study.slug])
    response = client.get(response.url)
    assert response.status_code == 302
    assert response.url == "https://app.prolific.com/submissions/complete?cc=C1A2B3"
    assert Answer.objects.filter(system__key="lay", origin=Answer.Origin.RESPONDENT).count() == 2


@pytest.mark.django_db
def test_weights_that_do_not_add_to_100_are_rejected_and_everything_typed_is_kept(client):
    study = answering_study(m=1)
    consented(client, study)
    response = client.post(
        page(study, 1), answer_post(weight_1="60", weight_2="25", additional_information="Their history")
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "Weights: 85 / 100" in html
    for typed in ["Honesty", 'value="60"', 'value="25"', "Lying to a friend breaks trust.", "Tell the truth, kindly."]:
        assert typed in html
    assert "Their history" in html
    assert not Answer.objects.filter(origin=Answer.Origin.RESPONDENT).exists()


@pytest.mark.django_db
def test_a_weight_without_a_feature_and_an_empty_page_are_rejected(client):
    study = answering_study(m=1)
    consented(client, study)
    response = client.post(page(study, 1), answer_post(feature_2="", reason_2=""))
    assert response.status_code == 400
    assert "Please name the feature" in response.content.decode()
    response = client.post(page(study, 1), {"action": "act"})
    assert response.status_code == 400
    assert "at least one feature" in response.content.decode()
    assert not Answer.objects.filter(origin=Answer.Origin.RESPONDENT).exists()


@pytest.mark.django_db
def test_a_double_submit_and_the_back_button_make_one_answer(client):
    study = answering_study(m=2)
    consented(client, study)
    first = client.post(page(study, 1), answer_post())
    second = client.post(page(study, 1), answer_post(action="Something else"))
    assert first.url == second.url == page(study, 2)
    back = client.get(page(study, 1))
    assert back.url == page(study, 2)
    assert Answer.objects.filter(origin=Answer.Origin.RESPONDENT).count() == 1
    assert Answer.objects.get(origin=Answer.Origin.RESPONDENT).action == "Tell the truth, kindly."


@pytest.mark.django_db
def test_a_respondent_who_closed_the_tab_resumes_on_the_same_page(client, django_user_model):
    from django.test import Client

    study = answering_study(m=3)
    consented(client, study)
    client.post(page(study, 1), answer_post())
    vignettes = list(RespondentTask.objects.order_by("position").values_list("vignette_id", flat=True))

    fresh = Client()  # a new browser: only the Prolific link
    response = fresh.get(entry(study))
    assert response.url == page(study, 2)
    assert list(RespondentTask.objects.order_by("position").values_list("vignette_id", flat=True)) == vignettes
    assert Respondent.objects.count() == 1
    # The same browser without the link's parameters resumes from its session.
    assert client.get(reverse("surveys:answering-entry", args=[study.slug])).url == page(study, 2)


@pytest.mark.django_db
def test_a_browser_without_a_session_or_a_link_gets_a_clear_page(client):
    study = answering_study()
    response = client.get(page(study, 1))
    assert response.status_code == 403
    assert "open the study again from its link" in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "problem"),
    [
        ("", "PROLIFIC_PID is missing"),
        (f"PROLIFIC_PID=abc&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION_ID}", "PROLIFIC_PID is not a Prolific id"),
        (f"PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}&SESSION_ID=<b>x</b>", "SESSION_ID is not a Prolific id"),
        (f"PROLIFIC_PID={PID}&SESSION_ID={SESSION_ID}", "STUDY_ID is missing"),
    ],
)
def test_bad_prolific_parameters_get_a_clear_page(client, query, problem):
    study = answering_study()
    response = client.get(reverse("surveys:answering-entry", args=[study.slug]) + "?" + query)
    assert response.status_code == 400
    assert problem in response.content.decode()
    assert "<b>x</b>" not in response.content.decode()
    assert not Respondent.objects.exists()


@pytest.mark.django_db
def test_a_study_without_a_human_system_says_so(client):
    study = answering_study()
    System.objects.filter(study=study, kind="human").delete()
    response = client.get(entry(study))
    assert response.status_code == 404
    assert "does not collect answers from participants" in response.content.decode()


@pytest.mark.django_db
def test_an_unknown_study_is_404(client):
    assert client.get(f"/r/nope/?PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION_ID}").status_code == 404


@pytest.mark.django_db
def test_an_invitation_admits_an_expert_who_writes_as_the_expert_system(client):
    from django.test import Client

    study = answering_study(m=1, completion_code="C1A2B3")
    phil = study.systems.get(key="phil")
    invitation = create_invitation(study=study, system=phil, label="Prof. X")
    url = reverse("surveys:answering-invitation", args=[study.slug, invitation.token])
    assert client.get(url).url == reverse("surveys:answering-consent", args=[study.slug])
    invitation.refresh_from_db()
    assert invitation.used_at is not None
    client.post(reverse("surveys:answering-consent", args=[study.slug]), {"agree": "yes"})
    # Opening the link again resumes the same respondent in this browser; another browser is refused.
    assert client.get(url).url == page(study, 1)
    assert Client().get(url).status_code == 403
    done = client.post(page(study, 1), answer_post())
    response = client.get(done.url)
    assert response.status_code == 200
    assert "Thank you for your answers" in response.content.decode()
    assert "prolific.com" not in response.content.decode()
    respondent = Respondent.objects.get()
    assert respondent.system == phil
    assert respondent.invitation == invitation
    assert respondent.prolific_pid == ""
    assert Answer.objects.get(origin=Answer.Origin.RESPONDENT).system == phil


@pytest.mark.django_db
def test_an_invalid_or_foreign_invitation_token_is_404(client):
    study = answering_study()
    other = make_study(slug="other", systems=("x",))
    invitation = create_invitation(study=study, system=study.systems.get(key="phil"))
    assert client.get(reverse("surveys:answering-invitation", args=[study.slug, "not-a-token"])).status_code == 404
    assert client.get(reverse("surveys:answering-invitation", args=[other.slug, invitation.token])).status_code == 404
    assert not Respondent.objects.exists()


@pytest.mark.django_db
def test_declining_consent_ends_the_survey_with_answer_writings_no_consent_code(client):
    study = answering_study(no_consent_code="JUDGENOC", answering_no_consent_code="NOC0DE")
    client.get(entry(study))
    response = client.post(reverse("surveys:answering-consent", args=[study.slug]), {"agree": "no"})
    response = client.get(response.url)
    assert response.url.endswith("?cc=NOC0DE")
    assert Respondent.objects.get().status == Respondent.Status.NO_CONSENT
    assert not RespondentTask.objects.exists()
    assert client.get(page(study, 1)).status_code == 404


@pytest.mark.django_db
def test_the_consent_page_needs_a_choice(client):
    study = answering_study()
    client.get(entry(study))
    response = client.post(reverse("surveys:answering-consent", args=[study.slug]), {})
    assert response.status_code == 400
    assert "Please choose whether you agree" in response.content.decode()


@pytest.mark.django_db
def test_markup_in_vignettes_and_in_respondents_answers_is_escaped(client):
    study = answering_study(m=1)
    study.vignettes.update(text="<img src=x onerror=alert(1)> story")
    consented(client, study)
    html = client.get(page(study, 1)).content.decode()
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    client.post(page(study, 1), answer_post(feature_1="<script>alert(1)</script>", action="<b>bold</b>"))
    staff = get_user_model().objects.create_superuser("r", "r@example.org", "pw-long-enough")
    client.force_login(staff)
    html = client.get(reverse("admin:surveys_study_answers", args=[study.pk])).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<b>bold</b>" not in html
    assert "Written in the answer survey" in html


@pytest.mark.django_db
def test_a_respondents_answer_can_be_selected_in_the_side_by_side_view(client):
    study = answering_study(m=1)
    consented(client, study)
    client.post(page(study, 1), answer_post())
    answer = Answer.objects.get(origin=Answer.Origin.RESPONDENT)
    staff = get_user_model().objects.create_superuser("r", "r@example.org", "pw-long-enough")
    client.force_login(staff)
    client.post(reverse("admin:surveys_study_select_answer", args=[study.pk, answer.pk]))
    answer.refresh_from_db()
    assert answer.selected
    assert answer.selected_by == staff
    assert answer.selected_at is not None


# Admin


@pytest.mark.django_db
def test_the_invitation_admin_creates_a_token_and_shows_the_full_link(client):
    study = answering_study()
    phil = study.systems.get(key="phil")
    staff = get_user_model().objects.create_superuser("r", "r@example.org", "pw-long-enough")
    client.force_login(staff)
    response = client.post(
        reverse("admin:surveys_invitation_add"), {"study": study.pk, "system": phil.pk, "label": "Prof. <i>Y</i>"}
    )
    assert response.status_code == 302
    invitation = Invitation.objects.get()
    assert invitation.created_by == staff
    assert len(invitation.token) >= 32
    html = client.get(reverse("admin:surveys_invitation_changelist")).content.decode()
    assert f"http://testserver/r/{study.slug}/invite/{invitation.token}/" in html
    assert "<i>Y</i>" not in html


@pytest.mark.django_db
def test_the_invitation_admin_names_each_expert_systems_study(admin_client):
    study = answering_study()
    other = make_study(slug="other", systems=("gpt",), reference="gpt")
    System.objects.create(study=other, key="phil", label="Philosophers", kind="expert", position=1)
    html = admin_client.get(reverse("admin:surveys_invitation_add")).content.decode()
    assert f"Philosophers ({study.slug})" in html
    assert "Philosophers (other)" in html


@pytest.mark.django_db
def test_the_invitation_admin_refuses_a_system_that_is_not_an_expert(client):
    study = answering_study()
    staff = get_user_model().objects.create_superuser("r", "r@example.org", "pw-long-enough")
    client.force_login(staff)
    response = client.post(
        reverse("admin:surveys_invitation_add"), {"study": study.pk, "system": study.systems.get(key="lay").pk}
    )
    assert response.status_code == 200
    assert not Invitation.objects.exists()


@pytest.mark.django_db
def test_the_respondent_admin_shows_status_pages_and_answers(client):
    study = answering_study(m=2)
    consented(client, study)
    client.post(page(study, 1), answer_post())
    staff = get_user_model().objects.create_superuser("r", "r@example.org", "pw-long-enough")
    client.force_login(staff)
    html = client.get(reverse("admin:surveys_respondent_changelist")).content.decode()
    assert PID in html
    assert "Writing" in html
    respondent = Respondent.objects.get()
    html = client.get(reverse("admin:surveys_respondent_change", args=[respondent.pk])).content.decode()
    assert "Tell the truth, kindly." in html or "lay on" in html


@pytest.mark.django_db
def test_researcher_pages_need_a_staff_login(client):
    for name in ["admin:surveys_invitation_changelist", "admin:surveys_respondent_changelist"]:
        response = client.get(reverse(name))
        assert response.status_code == 302
        assert "/admin/login/" in response.url


@pytest.mark.django_db
def test_an_invitations_page_shows_its_link_and_whether_it_was_used(client):
    study = answering_study()
    invitation = create_invitation(study=study, system=study.systems.get(key="phil"), label="Prof. Z")
    client.get(reverse("surveys:answering-invitation", args=[study.slug, invitation.token]))
    staff = get_user_model().objects.create_superuser("r", "r@example.org", "pw-long-enough")
    client.force_login(staff)
    html = client.get(reverse("admin:surveys_invitation_change", args=[invitation.pk])).content.decode()
    assert f"http://testserver/r/{study.slug}/invite/{invitation.token}/" in html
    assert "Opened " in html


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_respondents_arriving_together_are_still_spread_evenly():
    study = answering_study(vignettes=4, m=2)
    assert at_once(*[partial(start, study, i) for i in range(8)]) == [None] * 8
    per_vignette = Counter(RespondentTask.objects.values_list("vignette__key", flat=True))
    assert per_vignette == {"v1": 4, "v2": 4, "v3": 4, "v4": 4}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_simultaneous_submits_of_one_page_and_of_two_respondents_never_clash():
    study = answering_study(vignettes=1, m=1)
    tasks = [start(study, n).tasks.get() for n in range(2)]

    def submit(i):
        submit_answer(task=tasks[i % 2], features=[FeatureIn(feature="harm", weight=100)], action=f"act {i}")

    assert at_once(*[partial(submit, i) for i in range(6)]) == [None] * 6
    answers = Answer.objects.filter(origin=Answer.Origin.RESPONDENT)
    assert answers.count() == 2
    assert sorted(answers.values_list("sample", flat=True)) == [1, 2]


@pytest.mark.django_db
def test_a_weight_that_is_not_a_whole_number_is_named_as_such(client):
    study = answering_study(m=1)
    consented(client, study)
    response = client.post(page(study, 1), answer_post(weight_2="forty"))
    html = response.content.decode()
    assert response.status_code == 400
    assert "Enter a whole number." in html
    assert 'value="forty"' in html
    assert "Honesty" in html
    response = client.post(page(study, 1), answer_post(weight_2="140", weight_1="-40"))
    assert response.status_code == 400
    assert not Answer.objects.filter(origin=Answer.Origin.RESPONDENT).exists()


@pytest.mark.django_db
def test_a_study_with_respondents_can_still_be_deleted_and_a_used_invitation_cannot_alone():
    from django.db.models import RestrictedError

    study = answering_study(m=1)
    start(study, 1)
    invitation = create_invitation(study=study, system=study.systems.get(key="phil"))
    from surveys.services.respondent_survey import start_invited_respondent

    start_invited_respondent(invitation=invitation)
    with pytest.raises(RestrictedError):
        invitation.delete()
    study.delete()
    assert not Respondent.objects.exists()
    assert not RespondentTask.objects.exists()


@pytest.mark.django_db
def test_a_study_that_asks_for_no_answers_gives_a_clear_page_and_consent_can_be_given_later(client):
    study = answering_study(m=0)
    client.get(entry(study))
    response = client.post(reverse("surveys:answering-consent", args=[study.slug]), {"agree": "yes"})
    assert response.status_code == 409
    assert "answers per respondent" in response.content.decode()
    assert Respondent.objects.get().status == Respondent.Status.STARTED
    Study.objects.filter(pk=study.pk).update(answers_per_respondent=2)
    response = client.post(reverse("surveys:answering-consent", args=[study.slug]), {"agree": "yes"})
    assert response.url == page(study, 1)


@pytest.mark.django_db
def test_the_respondent_list_gives_the_link_to_paste_into_prolific(client):
    study = answering_study()
    staff = get_user_model().objects.create_superuser("r", "r@example.org", "pw-long-enough")
    client.force_login(staff)
    html = client.get(reverse("admin:surveys_respondent_changelist")).content.decode()
    assert (
        f"http://testserver/r/{study.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&amp;STUDY_ID={{{{%STUDY_ID%}}}}" in html
    )


@pytest.mark.django_db
def test_pages_come_in_their_order(client):
    study = answering_study(m=3)
    consented(client, study)
    assert client.get(page(study, 3)).url == page(study, 1)
    assert client.post(page(study, 2), answer_post()).url == page(study, 1)
    assert not Answer.objects.filter(origin=Answer.Origin.RESPONDENT).exists()
    assert client.get(page(study, 4)).status_code == 404


@pytest.mark.django_db
def test_a_researcher_previews_the_writing_page_and_nothing_is_stored(client):
    study = answering_study()
    url = reverse("surveys:answering-preview", args=[study.slug])
    assert "/admin/login/" in client.get(url).url
    staff = get_user_model().objects.create_superuser("r", "r@example.org", "pw-long-enough")
    client.force_login(staff)
    assert "Researcher preview" in client.get(url).content.decode()
    response = client.post(url, answer_post(weight_2="10"))
    assert response.status_code == 400
    assert "Weights: 70 / 100" in response.content.decode()
    response = client.post(url, answer_post())
    assert response.status_code == 200
    assert "this answer would be accepted" in response.content.decode()
    assert not Answer.objects.filter(origin=Answer.Origin.RESPONDENT).exists()
    assert not Respondent.objects.exists()


@pytest.mark.django_db
def test_pages_being_written_count_for_their_vignette_until_they_are_abandoned():
    import datetime as dt

    import time_machine

    from surveys.services.respondent_survey import vignette_loads

    study = answering_study(vignettes=2, m=1)
    lay = study.systems.get(key="lay")
    with time_machine.travel(dt.datetime(2026, 1, 1, 9, tzinfo=dt.UTC), tick=False):
        first = start(study, 1).tasks.get().vignette_id
    (other,) = set(study.vignettes.values_list("pk", flat=True)) - {first}
    with time_machine.travel(dt.datetime(2026, 1, 1, 10, tzinfo=dt.UTC), tick=False):
        assert vignette_loads(system=lay) == {first: 1, other: 0}  # still being written
    with time_machine.travel(dt.datetime(2026, 1, 1, 13, tzinfo=dt.UTC), tick=False):
        assert vignette_loads(system=lay) == {first: 0, other: 0}  # abandoned


@pytest.mark.django_db
def test_a_writers_prolific_id_alone_does_not_resume_their_answers_in_another_session(client):
    from django.test import Client

    study = answering_study(m=3)
    consented(client, study)
    client.post(page(study, 1), answer_post())

    stranger = Client()  # knows the PROLIFIC_PID (it is in every link), not the writer's SESSION_ID
    response = stranger.get(entry(study, session=hexid(99)))
    assert response.status_code == 409
    assert "started in another session" in response.content.decode()
    assert stranger.get(page(study, 2)).status_code == 403  # no way onto the writer's pages
    assert Respondent.objects.get().session_id == SESSION_ID
    assert client.get(entry(study)).url == page(study, 2)  # the writer's own link still resumes
