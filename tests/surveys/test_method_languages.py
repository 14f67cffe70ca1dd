"""Issue 23.5: the method's questions, the attention check and the countries in every language offered,
and a study's untranslated text isolated on a right-to-left page."""

from pathlib import Path

import pytest
from django.utils import translation

from surveys import constants
from surveys.forms.judging import DemographicsForm, PairForm
from surveys.models import DEFAULT_ATTENTION_OPTIONS, DEFAULT_ATTENTION_PROMPT, METHOD_QUESTIONS, Question
from surveys.services.languages import attention_texts
from surveys.services.lifecycle import go_live
from tests.conftest import make_study
from tests.surveys.test_judging_flow import DEMOGRAPHICS, csrf_client, post

ROOT = Path(__file__).resolve().parents[2]
OFFERED = sorted(path.name for path in (ROOT / "locale").iterdir() if (path / "LC_MESSAGES" / "django.mo").exists())


def test_the_project_offers_at_least_german():
    assert "de" in OFFERED


@pytest.mark.parametrize("language", OFFERED)
def test_every_text_the_method_ships_is_translated(language):
    texts = [
        *(text for _key, text in METHOD_QUESTIONS),
        DEFAULT_ATTENTION_PROMPT,
        *DEFAULT_ATTENTION_OPTIONS,
        *constants.COUNTRIES,
        *constants.AGE_GROUPS[-1:],
        *constants.EDUCATION_LEVELS,
    ]
    with translation.override(language):
        untranslated = [text for text in texts if translation.gettext(text) == text and not _same_in(language, text)]
    assert untranslated == []


def _same_in(language: str, text: str) -> bool:
    # Names written alike in both languages ("Chile", "Kenia" is not): the .po says so with msgstr == msgid.
    po = (ROOT / "locale" / language / "LC_MESSAGES" / "django.po").read_text(encoding="utf-8")
    escaped = text.replace('"', '\\"')
    return f'msgid "{escaped}"\nmsgstr "{escaped}"' in po


@pytest.mark.django_db
def test_a_german_study_asks_the_methods_questions_in_german_and_lists_countries_in_german_order():
    study = make_study(language="de")
    for key, text in METHOD_QUESTIONS:
        Question.objects.filter(study=study, key=key).update(text=text)
    with translation.override("de"):
        labels = [
            field.label for field in PairForm(questions=list(study.questions.order_by("position"))).fields.values()
        ]
        countries = [str(label) for _value, label in DemographicsForm().fields["country"].choices]
        prompt, options = attention_texts(study, DEFAULT_ATTENTION_OPTIONS)
    assert options == ["Ich habe die Antworten schnell gelesen", "Ich habe die Antworten sorgfältig gelesen"]
    assert labels[0].startswith("1. Welche der beiden Antworten hat die Merkmale der Situation")
    assert all("Which" not in label for label in labels)
    assert countries.index("Deutschland") < countries.index("Frankreich") < countries.index("Österreich")
    assert countries.index("Ägypten") < countries.index("Albanien")
    assert countries[-2:] == ["Anderes", "Keine Angabe"]
    assert prompt != DEFAULT_ATTENTION_PROMPT


@pytest.mark.django_db
def test_a_study_written_question_is_shown_as_written():
    study = make_study(language="de")
    with translation.override("de"):
        labels = [
            field.label for field in PairForm(questions=list(study.questions.order_by("position"))).fields.values()
        ]
    assert labels[0] == "1. Which answer is better on features?"


@pytest.mark.django_db
def test_untranslated_english_on_an_arabic_page_is_isolated_so_its_punctuation_stays_put():
    study = go_live(study=make_study(language="ar", minimum_seconds=0, description="Read this, please."))
    client = csrf_client()
    response = client.get(f"/s/{study.slug}/?PROLIFIC_PID={'1' * 24}&STUDY_ID={'2' * 24}&SESSION_ID={'3' * 24}")
    consent = client.get(response.url).content.decode()
    assert '<html lang="ar" dir="rtl">' in consent
    assert '<p dir="auto">Read this, please.</p>' in consent
    response = post(client, response.url, {"consent": "yes", "anonymised": "yes"})
    response = post(client, response.url, DEMOGRAPHICS)
    page = client.get(response.url).content.decode()
    assert '<div class="vignette-text" dir="auto">' in page
    assert "<legend><bdi>1. Which answer is better on features?</bdi></legend>" in page
