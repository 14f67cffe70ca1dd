"""Issue 23.3 and 23.4: completion codes checked for Prolific, lab studies, and what consent tells a judge."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.test import Client

from surveys import constants
from surveys.forms.judging import DemographicsForm
from surveys.models import Participant, Study
from surveys.services.judging import consent_answered
from surveys.services.lifecycle import go_live
from tests.conftest import make_study
from tests.surveys.test_judging_flow import DEMOGRAPHICS, csrf_client, link, live_study, picks, post

pytestmark = pytest.mark.django_db


def finish_as_a_lab_judge(client, study):
    response = client.get(f"/s/{study.slug}/")  # the lab's link: no Prolific ids
    assert response.status_code == 302, response.content
    response = post(client, response.url, {"consent": "yes", "anonymised": "yes"})
    response = post(client, response.url, DEMOGRAPHICS)
    while "/pair/" in response.url:
        response = post(client, response.url, picks(study))
    response = post(client, response.url, {"choice": "2"})
    return client.get(response.url)


def test_a_study_on_prolific_without_a_completion_code_cannot_go_live():
    study = make_study(prolific_study_id="a" * 24)
    with pytest.raises(ValidationError, match="runs on Prolific but has no completion code"):
        go_live(study=study)
    Study.objects.filter(pk=study.pk).update(completion_code="DONE1")
    assert go_live(study=study).status == Study.Status.LIVE


def test_a_lab_study_needs_no_codes_and_its_judges_end_on_a_thank_you_page():
    study = go_live(study=make_study(lab_study=True, minimum_seconds=0, vignettes_per_participant=2))
    page = finish_as_a_lab_judge(csrf_client(), study)
    text = page.content.decode()
    assert "You may now close this page." in text
    assert "Prolific" not in text
    assert b'http-equiv="refresh"' not in page.content
    participant = Participant.objects.get()
    assert (participant.status, participant.is_preview) == ("completed", False)


def test_a_lab_study_with_a_code_shows_it_to_show_the_researcher():
    study = go_live(study=make_study(lab_study=True, minimum_seconds=0, completion_code="LAB42"))
    text = finish_as_a_lab_judge(csrf_client(), study).content.decode()
    assert "LAB42" in text
    assert "show this code to the researcher" in text
    assert "prolific.com" not in text


def test_a_lab_study_with_a_prolific_id_is_refused_and_the_study_page_says_what_judges_see_at_the_end():
    with pytest.raises(ValidationError, match="a lab study runs without Prolific"):
        go_live(study=make_study(slug="both", lab_study=True, prolific_study_id="a" * 24))
    study = make_study(lab_study=True, completion_code="LAB42")
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("res", password="pw"))
    page = client.get(f"/admin/surveys/study/{study.pk}/change/").content.decode()
    assert (
        "At the end: Lab study: judges end on &#x27;Thank you: you have finished&#x27; and the completion code LAB42"
        in page
    )


def test_consent_shows_contact_ethics_and_retention_in_the_studys_language():
    study = make_study(
        language="de",
        researchers_contact="Dr. Ada Example, ada@example.org",
        ethics_reference="Ethics committee of Example University, ref. 2026-17",
        data_retention="Kept for ten years.",
        translations={
            "de": {"data_retention": "Zehn Jahre aufbewahrt.", "ethics_reference": "Ethikkommission, Az. 2026-17"}
        },
    )
    study = go_live(study=study)
    client = csrf_client()
    response = client.get(f"/s/{study.slug}/?PROLIFIC_PID={'1' * 24}&STUDY_ID={'2' * 24}&SESSION_ID={'3' * 24}")
    text = client.get(response.url).content.decode()
    assert "Zehn Jahre aufbewahrt." in text
    assert "Ethikkommission, Az. 2026-17" in text
    assert "ada@example.org" in text  # no German given: as written
    assert "Kept for ten years" not in text


def test_every_demographics_question_offers_prefer_not_to_say_and_age_goes_to_85_plus():
    form = DemographicsForm()
    for name, field in form.fields.items():
        if hasattr(field, "choices"):
            assert constants.PREFER_NOT_TO_SAY in [value for value, _ in field.choices], name
    ages = [value for value, _ in form.fields["age"].choices]
    assert "85+" in ages
    assert DemographicsForm({**DEMOGRAPHICS, "age": "85+", "education": "Prefer not to say"}).is_valid()


def test_a_study_file_carries_the_consent_texts_and_the_lab_mode_and_exports_them_back():
    from surveys.services.study_files import export_study, import_study

    study = make_study(slug="filed", researchers_contact="Dr Ada, ada@example.org", lab_study=True)
    exported = export_study(study)
    assert exported["consent"]["researchers_contact"] == "Dr Ada, ada@example.org"
    assert exported["consent"]["lab_study"] is True
    exported["consent"]["ethics_reference"] = "REC 2026-17"
    exported["slug"] = "filed-again"
    again = import_study(exported)
    assert (again.lab_study, again.ethics_reference) == (True, "REC 2026-17")


def test_a_consent_answer_sent_again_or_from_a_later_page_changes_nothing_and_sends_the_judge_on():
    study = live_study()
    judge = csrf_client()
    consent_page = judge.get(link(study)).url
    page = judge.get(consent_page)
    yes = {"consent": "yes", "anonymised": "yes", "csrfmiddlewaretoken": page.context["csrf_token"]}
    first = judge.post(consent_page, yes)
    consented_at = Participant.objects.get().consented_at
    again = judge.post(consent_page, {**yes, "consent": "no", "anonymised": "no"})  # the back button
    assert first.url == again.url == f"/s/{study.slug}/about-you/"
    after_demographics = post(judge, again.url, DEMOGRAPHICS).url
    late = judge.post(consent_page, {**yes, "consent": "no"})
    assert late.url == after_demographics == f"/s/{study.slug}/pair/1/"
    participant = Participant.objects.get()
    assert (participant.status, participant.consented_at) == (Participant.Status.JUDGING, consented_at)
    assert participant.anonymised_data_consent is True


def test_a_consent_answer_for_another_studys_participant_changes_nothing():
    first, second = live_study(slug="first"), live_study(slug="second")
    csrf_client().get(link(first))
    participant = Participant.objects.get()
    assert consent_answered(participant_id=participant.pk, slug=second.slug, consent=True, anonymised=True) is None
    assert consent_answered(participant_id=participant.pk + 1, slug=first.slug, consent=True, anonymised=True) is None
    assert Participant.objects.get().status == Participant.Status.STARTED
    found = consent_answered(participant_id=participant.pk, slug=first.slug, consent=True, anonymised=True)
    assert found is not None
    assert found.status == Participant.Status.CONSENTED
