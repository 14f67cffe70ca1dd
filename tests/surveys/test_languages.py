"""A study in another language: the study file's translations, the pages' language, the expected duration."""

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from surveys.models import Participant, Question, Study
from surveys.services.duration import estimated_minutes
from surveys.services.freezing import StudyFrozen, check_editable
from surveys.services.lifecycle import go_live
from surveys.services.study_files import StudyFileError, export_study, import_study
from tests.conftest import make_study

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "surveys" / "demo" / "demo.study.json"
LINK = (
    "/s/{}/?PROLIFIC_PID=5f0c8a1b2c3d4e5f6a7b8c9d&STUDY_ID=60aa11bb22cc33dd44ee55ff&SESSION_ID=70aa11bb22cc33dd44ee55ff"
)


def demo_data() -> dict:
    return json.loads(DEMO.read_text(encoding="utf-8"))


def german_demo() -> dict:
    data = demo_data()
    data["language"] = "de"
    data["translations"] = {"de": {"name": "Alltägliche Dilemmata", "description": "Eine kurze Studie."}}
    data["questions"][0]["translations"] = {"de": {"text": "Welche Antwort ist insgesamt besser?"}}
    data["vignettes"][0]["translations"] = {"de": {"text": "Ein Kind findet eine Geldbörse.", "character": "Kim"}}
    data["answers"][0]["translations"] = {
        "de": {"action": "Die Geldbörse abgeben.", "features": [{"feature": "Ehrlichkeit", "reason": "Sie zählt."}]}
    }
    return data


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


@pytest.mark.django_db
def test_a_study_file_carries_the_language_and_every_translation_through_import_and_export():
    data = german_demo()
    study = import_study(data)
    assert study.language == "de"
    assert study.translations["de"]["name"] == "Alltägliche Dilemmata"
    assert Question.objects.get(study=study, key=data["questions"][0]["key"]).translations == {
        "de": {"text": "Welche Antwort ist insgesamt besser?"}
    }
    exported = export_study(study)
    assert exported["language"] == "de"
    assert exported["translations"] == data["translations"]
    assert exported["vignettes"][0]["translations"] == data["vignettes"][0]["translations"]
    assert "translations" not in exported["vignettes"][1]  # none given: the file stays as short as before
    answer = next(a for a in exported["answers"] if a.get("translations"))
    assert answer["translations"]["de"]["features"][0]["feature"] == "Ehrlichkeit"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "error"),
    [
        (
            lambda d: d.update(language="german"),
            "study.language: 'german' is not a language code (such as en, de or ar)",
        ),
        (
            lambda d: d["questions"][0].update(translations={"de": {"title": "x"}}),
            "questions[0].translations: de.title: is not translatable here (only text)",
        ),
        (
            lambda d: d["vignettes"][0].update(translations={"German": {"text": "x"}}),
            "vignettes[0].translations: 'German' is not a language code (such as de, ar or pt-br)",
        ),
        (
            lambda d: d["questions"][0].update(translations={"de": {"text": ""}}),
            "questions[0].translations: de.text: must be a non-empty text",
        ),
        (
            lambda d: d.update(translations={"de": {"attention_options": ["nur eine"]}}),
            "study.translations: de.attention_options: must be a list of exactly two texts",
        ),
    ],
)
def test_a_wrong_translation_is_named_by_its_place_language_and_key(change, error):
    data = copy.deepcopy(german_demo())
    change(data)
    with pytest.raises(StudyFileError) as caught:
        import_study(data)
    assert error in caught.value.errors
    assert Study.objects.count() == 0


@pytest.mark.django_db
def test_a_german_study_shows_its_consent_page_in_german_with_its_german_texts(client):
    study = go_live(study=make_study(language="de", minimum_seconds=0))
    study.translations = {"de": {"name": "Alltägliche Dilemmata", "description": "Eine kurze Studie über Alltag."}}
    study.save()
    response = client.get(LINK.format(study.slug), follow=True)
    page = text(response)
    assert '<html lang="de" dir="ltr">' in page
    assert '<h1 dir="auto">Alltägliche Dilemmata</h1>' in page
    assert "Eine kurze Studie über Alltag." in page
    assert "Sind Sie einverstanden, an dieser Studie teilzunehmen?" in page
    assert "Das dauert etwa" in page
    assert response.headers["Content-Language"] == "de"

    response = client.post(f"/s/{study.slug}/consent/", {"anonymised": "yes"})  # the first question left open
    assert "Bitte geben Sie an, ob Sie mit der Teilnahme einverstanden sind." in text(response)


@pytest.mark.django_db
def test_an_english_study_after_a_german_one_is_english_again(client):
    go_live(study=make_study(slug="de1", language="de", minimum_seconds=0))
    english = go_live(study=make_study(slug="en1", minimum_seconds=0))
    client.get(LINK.format("de1"), follow=True)
    page = text(client.get(LINK.format(english.slug).replace("SESSION_ID=70", "SESSION_ID=71"), follow=True))
    assert "Do you agree to take part in this study?" in page
    assert "Sind Sie" not in page


@pytest.mark.django_db
def test_an_arabic_study_lays_its_pages_out_right_to_left(client):
    study = go_live(study=make_study(language="ar", minimum_seconds=0))
    page = text(client.get(LINK.format(study.slug), follow=True))
    assert '<html lang="ar" dir="rtl">' in page


@pytest.mark.django_db
def test_the_expected_time_comes_from_the_design_until_judges_have_finished():
    study = make_study(vignettes=3, vignettes_per_participant=3)  # 5 questions
    # 90 s fixed + 3 pairs × (100 s reading + 5 × 10 s) = 540 s
    assert estimated_minutes(study) == 9
    for n in range(5):
        Participant.objects.create(
            study=study, prolific_pid=f"p{n}", status=Participant.Status.COMPLETED, seconds_total=300 + n
        )
    # The judges' median (302 s on the pairs) + 90 s fixed = 392 s: 7 minutes.
    assert estimated_minutes(study) == 7


@pytest.mark.django_db
def test_the_admin_refuses_a_translation_the_study_file_would_refuse():
    study = make_study()
    study.language = "Deutsch"
    study.translations = {"de": {"titel": "x"}}
    with pytest.raises(ValidationError) as caught:
        study.full_clean()
    assert caught.value.message_dict == {
        "language": ["'Deutsch' is not a language code (such as en, de or ar)."],
        "translations": [
            "de.titel: is not translatable here (only name, description, researchers_contact, ethics_reference, "
            "data_retention, attention_prompt, attention_options)"
        ],
    }


@pytest.mark.django_db
def test_a_german_studys_attention_check_and_demographics_are_in_german(client):
    study = go_live(study=make_study(language="de", minimum_seconds=0, vignettes_per_participant=1))
    client.get(LINK.format(study.slug), follow=True)
    client.post(f"/s/{study.slug}/consent/", {"consent": "yes", "anonymised": "yes"})
    page = text(client.get(f"/s/{study.slug}/about-you/"))
    assert '<option value="Female">Weiblich</option>' in page
    answers = {"gender": "Female", "age": "35-44", "religion": "Islam", "education": "PhD", "country": "Germany"}
    client.post(f"/s/{study.slug}/about-you/", answers)
    picks = {key: "first" for key in study.questions.values_list("key", flat=True)}
    client.post(f"/s/{study.slug}/pair/1/", picks)
    page = text(client.get(f"/s/{study.slug}/check/"))
    assert "Diese Frage prüft, ob Sie aufmerksam lesen." in page
    assert "Ich habe die Antworten sorgfältig gelesen" in page
    assert Participant.objects.get().demographics["gender"] == "Female"  # stored in English for the analysis


def test_the_german_catalogue_is_complete_and_its_compiled_file_is_current(tmp_path):
    po = ROOT / "locale" / "de" / "LC_MESSAGES" / "django.po"
    entries = po.read_text(encoding="utf-8").split("\n\n")[1:]  # after the header
    untranslated = [e for e in entries if re.search(r'^msgstr(\[\d\])? ""\Z', e, re.MULTILINE) or "#, fuzzy" in e]
    assert untranslated == []
    if not shutil.which("msgfmt"):
        pytest.skip("msgfmt is missing (apt-get install gettext)")
    subprocess.run(["msgfmt", "--check", "-o", str(tmp_path / "django.mo"), str(po)], check=True)
    assert (tmp_path / "django.mo").read_bytes() == po.with_suffix(".mo").read_bytes(), "run `make messages`"


@pytest.mark.django_db
def test_a_live_studys_language_and_translations_are_frozen_with_it():
    study = go_live(study=make_study())
    for field in ("language", "translations"):
        with pytest.raises(StudyFrozen):
            check_editable(study, [field])


def _link(slug: str, pid: str = "5f0c8a1b2c3d4e5f6a7b8c9d", session: str = "70aa11bb22cc33dd44ee55ff") -> str:
    return f"/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID=60aa11bb22cc33dd44ee55ff&SESSION_ID={session}"


@pytest.mark.django_db
def test_a_german_studys_entry_refusals_are_in_german(client, settings):
    from django.test import Client

    from surveys.services.lifecycle import close_study

    draft = make_study(slug="entwurf", language="de")
    response = client.get(_link(draft.slug))
    assert response.status_code == 400
    assert "Diese Studie ist für Teilnehmende derzeit nicht geöffnet." in text(response)
    close_study(study=go_live(study=make_study(slug="zu", language="de")))
    assert "Diese Studie ist für Teilnehmende derzeit nicht geöffnet." in text(Client().get(_link("zu")))

    study = go_live(study=make_study(slug="offen", language="de", minimum_seconds=0))
    Client().get(_link(study.slug))  # one session open in another browser
    response = Client().get(_link(study.slug, session="71aa11bb22cc33dd44ee55ff"))
    assert response.status_code == 409
    assert "Sie haben bereits eine laufende Teilnahme an dieser Studie auf Prolific" in text(response)
    assert "You already have" not in text(response)

    settings.ENTRY_RATE_LIMIT = "1/10m"
    Client().get(_link(study.slug, pid="5f0c8a1b2c3d4e5f6a7b8c00", session="72aa11bb22cc33dd44ee55ff"))
    response = Client().get(_link(study.slug, pid="5f0c8a1b2c3d4e5f6a7b8c01", session="73aa11bb22cc33dd44ee55ff"))
    assert response.status_code == 429
    assert "bitte 10 Minuten" in text(response)
    assert "Too many people" not in text(response)

    response = Client().get(
        f"/r/{study.slug}/?PROLIFIC_PID={'5f0c8a1b2c3d4e5f6a7b8c02'}&STUDY_ID={'6' * 24}&SESSION_ID={'7' * 24}"
    )
    assert response.status_code == 429
    assert "bitte 10 Minuten" in text(response)


@pytest.mark.django_db
def test_an_experts_invitation_refusals_are_in_the_studys_language():
    from django.test import Client
    from django.urls import reverse

    from surveys.services.invitations import revoke_invitation
    from surveys.services.respondent_survey import create_invitation
    from tests.surveys.test_respondents import answering_study

    study = answering_study(m=2)
    study.language = "de"
    study.save()
    invitation = create_invitation(study=study, system=study.systems.get(key="phil"), label="Prof. X")
    url = reverse("surveys:answering-invitation", args=[study.slug, invitation.token])
    Client().get(url)  # bound to the first browser
    response = Client().get(url)
    assert response.status_code == 403
    assert "Diese Einladung wird bereits verwendet; bitten Sie die Forschenden um einen neuen Link." in text(response)
    revoke_invitation(invitation=invitation)
    assert "Diese Einladung wurde zurückgezogen" in text(Client().get(url))


@pytest.mark.django_db
def test_an_answer_writers_other_session_is_refused_in_the_studys_language():
    from django.test import Client

    from tests.surveys.test_respondents import answering_study

    study = answering_study(m=2)
    study.language = "de"
    study.save()
    link = "/r/{}/?PROLIFIC_PID=5f0c8a1b2c3d4e5f6a7b8c9d&STUDY_ID=60aa11bb22cc33dd44ee55ff&SESSION_ID={}"
    Client().get(link.format(study.slug, "70aa11bb22cc33dd44ee55ff"))
    response = Client().get(link.format(study.slug, "71aa11bb22cc33dd44ee55ff"))
    assert response.status_code == 409
    assert "Sie haben bereits eine laufende Teilnahme an dieser Studie auf Prolific" in text(response)
