"""Building a study in the admin: a new study starts from the method, and broken rules are said in words."""

import pytest
from django.apps import apps
from django.db.models import BaseConstraint
from django.urls import reverse

from surveys.models import DEFAULT_ATTENTION_OPTIONS, DEFAULT_ATTENTION_PROMPT, METHOD_QUESTIONS, Study, System
from tests.surveys.test_admin import _FormFields

ADD = reverse("admin:surveys_study_add")


def _form_data(client, url: str) -> tuple[str, dict]:
    page = client.get(url).content.decode()
    fields = _FormFields()
    fields.feed(page)
    return page, {name: value for name, value in fields.data.items() if name != "csrfmiddlewaretoken"}


def _with_systems(data: dict, *rows: tuple[str, str, str]) -> dict:
    """`rows` (key, label, kind) typed into the systems inline's empty rows."""
    for index, (key, label, kind) in enumerate(rows):
        data.update({f"systems-{index}-{name}": value for name, value in [("key", key), ("label", label)]})
        data.update({f"systems-{index}-kind": kind, f"systems-{index}-position": str(index)})
        data.update({f"systems-{index}-parameters": "{}", f"systems-{index}-translations": "{}"})
    data["systems-TOTAL_FORMS"] = str(len(rows))
    return data


@pytest.mark.django_db
@pytest.mark.usefixtures("researcher")
def test_a_new_study_starts_with_the_methods_five_questions_and_attention_check(client):
    page, data = _form_data(client, ADD)
    assert [data[f"questions-{n}-key"] for n in range(5)] == [key for key, _ in METHOD_QUESTIONS]
    assert data["questions-4-text"] == METHOD_QUESTIONS[4][1]
    assert data["attention_prompt"] == DEFAULT_ATTENTION_PROMPT
    assert data["attention_options"] == '["I read the answers quickly", "I read the answers carefully"]'
    assert "starts with the method's five questions" in page

    data.update({"name": "Pilot", "slug": "pilot", "reference_key": "lay-human"})
    _with_systems(data, ("gpt", "GPT", "human"), ("lay-human", "Lay human", "human"))
    response = client.post(ADD, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    study = Study.objects.get(slug="pilot")
    assert list(study.questions.values_list("key", "text")) == METHOD_QUESTIONS
    assert study.attention_options == DEFAULT_ATTENTION_OPTIONS
    assert study.reference_system == System.objects.get(study=study, key="lay-human")


@pytest.mark.django_db
@pytest.mark.usefixtures("researcher")
def test_a_prefilled_question_cleared_of_key_and_text_is_left_out(client):
    _, data = _form_data(client, ADD)
    data.update({"name": "Four", "slug": "four", "questions-2-key": "", "questions-2-text": ""})
    response = client.post(ADD, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    keys = list(Study.objects.get(slug="four").questions.values_list("key", flat=True))
    assert keys == ["features", "weighting", "conclusion", "additional_info"]


@pytest.mark.django_db
@pytest.mark.usefixtures("researcher")
def test_a_reference_key_that_names_no_system_on_the_page_is_an_error_and_nothing_is_saved(client):
    _, data = _form_data(client, ADD)
    data.update({"name": "Pilot", "slug": "pilot", "reference_key": "lay-humans"})
    _with_systems(data, ("gpt", "GPT", "human"), ("lay-human", "Lay human", "human"))
    response = client.post(ADD, data)
    assert response.status_code == 200
    assert "No system under Systems has the key &#x27;lay-humans&#x27; (keys entered: gpt, lay-human)" in (
        response.content.decode()
    )
    assert not Study.objects.filter(slug="pilot").exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("researcher")
def test_a_study_with_systems_chooses_its_reference_from_them(client, study):
    page, _ = _form_data(client, reverse("admin:surveys_study_change", args=[study.pk]))
    assert 'name="reference_system"' in page
    assert 'name="reference_key"' not in page


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "words", "name"),
    [
        (
            {"repetitions": "0"},
            "Repetitions must be at least 1: each cell needs at least one complete assignment.",
            "study_repetitions_positive",
        ),
        (
            {"systems-0-kind": "llm", "systems-0-provider": "", "systems-0-model": ""},
            "A language-model system needs a provider and a model",
            "system_llm_has_provider_and_model",
        ),
    ],
)
@pytest.mark.usefixtures("researcher")
def test_a_broken_rule_on_the_study_page_is_said_in_words_not_by_its_constraint_name(
    client, study, change, words, name
):
    url = reverse("admin:surveys_study_change", args=[study.pk])
    _, data = _form_data(client, url)
    response = client.post(url, {**data, **change})
    page = response.content.decode()
    assert response.status_code == 200
    assert words in page
    assert "Constraint" not in page
    assert name not in page
    study.refresh_from_db()
    assert study.repetitions == 8


@pytest.mark.django_db
@pytest.mark.usefixtures("researcher")
def test_a_question_key_already_taken_is_said_in_words(client, study):
    url = reverse("admin:surveys_study_change", args=[study.pk])
    _, data = _form_data(client, url)
    data["questions-1-key"] = data["questions-0-key"]
    page = client.post(url, data).content.decode()
    assert "Two questions have the same key: each question needs its own key." in page
    assert "Constraint" not in page


def test_every_named_constraint_says_in_words_what_it_means():
    for model in apps.get_app_config("surveys").get_models():
        for constraint in model._meta.constraints:
            message = constraint.get_violation_error_message()
            assert constraint.violation_error_message != BaseConstraint.default_violation_error_message, constraint.name
            assert constraint.name not in message
            assert message.endswith(".")


@pytest.mark.django_db
@pytest.mark.usefixtures("researcher")
def test_two_new_systems_with_one_key_are_said_in_words_before_anything_is_saved(client):
    _, data = _form_data(client, ADD)
    data.update({"name": "Pilot", "slug": "pilot"})
    _with_systems(data, ("gpt", "GPT", "human"), ("gpt", "GPT again", "human"))
    page = client.post(ADD, data).content.decode()
    assert "Two systems have the same key: each system needs its own key." in page
    assert "Constraint" not in page
    assert not Study.objects.filter(slug="pilot").exists()
