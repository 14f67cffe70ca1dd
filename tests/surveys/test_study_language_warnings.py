"""A study in a language without a shipped interface translation, or with texts not in its language, says so where
the language is chosen (the study page's help under the field, a warning on saving) and on the readiness line."""

import pytest
from django.urls import reverse

from surveys.models import Question, Study
from surveys.services.languages import interface_languages, language_warnings
from tests.conftest import make_study


def test_the_shipped_interface_languages_are_english_and_the_compiled_locales():
    assert interface_languages() == ["de", "en"]


@pytest.mark.django_db
def test_an_arabic_study_with_english_texts_says_both_on_its_page(client, researcher):
    study = make_study(language="ar")
    page = client.get(reverse("admin:surveys_study_change", args=[study.pk])).content.decode()

    no_interface = "no interface translation ships for &#x27;ar&#x27; (shipped: de, en)"
    assert page.count(no_interface) == 2  # under the language field, and on the readiness line
    assert "Interface translations ship for: de, en." in page
    assert "study texts are not in &#x27;ar&#x27; (neither translated nor written in it)" in page
    assert "question features, question weighting" in page


@pytest.mark.django_db
def test_texts_written_in_the_languages_script_or_translated_are_not_missing():
    study = make_study(language="ar")
    Question.objects.filter(study=study).update(text="أي إجابة أفضل؟")
    study.vignettes.update(translations={"ar": {"text": "طفل يجد محفظة."}})
    [interface, texts] = language_warnings(Study.objects.get(pk=study.pk))
    assert interface.startswith("no interface translation ships for 'ar'")
    assert "question" not in texts
    assert "vignette" not in texts
    assert "answer alpha × v1" in texts  # the answers are still English


@pytest.mark.django_db
def test_a_german_study_warns_only_of_texts_left_untranslated_once_some_are():
    study = make_study(language="de")
    assert language_warnings(study) == []  # German ships; its texts are taken to be written in German
    first = study.questions.first()
    first.translations = {"de": {"text": "Welche Antwort ist insgesamt besser?"}}
    first.save()
    [texts] = language_warnings(study)
    assert first.key not in texts
    assert "vignette v1" in texts
