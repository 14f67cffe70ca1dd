"""The pair page's form: each form its own fields and widgets, so one judge's choices, errors and language
never reach another's form, whatever the threads."""

import pytest
from django.utils import translation

from surveys.forms.judging import PairForm
from surveys.models import METHOD_QUESTIONS, Question
from tests.conftest import make_study


def _questions(study):
    return list(study.questions.order_by("position"))


@pytest.mark.django_db
def test_one_judges_incomplete_page_leaves_the_next_judges_form_untouched():
    questions = _questions(make_study())
    first, second = questions[0].key, questions[1].key
    incomplete = PairForm({first: "first"}, questions=questions)
    assert not incomplete.is_valid()
    assert first not in incomplete.errors
    assert second in incomplete.errors

    complete = PairForm({q.key: "second" for q in questions}, questions=questions)
    assert complete.is_valid(), complete.errors
    assert complete.picks() == {q.key: "second" for q in questions}
    assert PairForm(questions=questions).errors == {}  # an unfilled page shows no one's errors
    html = str(PairForm(questions=questions))
    assert "checked" not in html
    assert "errorlist" not in html


@pytest.mark.django_db
def test_the_same_questions_are_labelled_in_each_judges_language():
    study = make_study(language="de")
    for key, text in METHOD_QUESTIONS:
        Question.objects.filter(study=study, key=key).update(text=text)
    questions = _questions(study)
    with translation.override("en"):
        english = [str(field.label) for field in PairForm(questions=questions).fields.values()]
        english_choices = str(PairForm(questions=questions))
    with translation.override("de"):
        german = [str(field.label) for field in PairForm(questions=questions).fields.values()]
        german_choices = str(PairForm(questions=questions))
    assert english[0].startswith("1. Which of the two answers")
    assert german[0].startswith("1. Welche der beiden")
    assert "Answer A" in english_choices
    assert "Answer A" not in german_choices


@pytest.mark.django_db
def test_a_question_edited_in_a_draft_is_shown_with_its_new_text():
    study = make_study()
    questions = _questions(study)
    PairForm(questions=questions)
    questions[0].text = "Which answer weighs the features better?"
    assert PairForm(questions=questions).fields[questions[0].key].label == "1. Which answer weighs the features better?"


@pytest.mark.django_db
def test_forms_built_at_once_in_many_threads_share_no_field_or_widget():
    from concurrent.futures import ThreadPoolExecutor

    questions = _questions(make_study())
    with ThreadPoolExecutor(max_workers=4) as pool:
        forms = list(pool.map(lambda _: PairForm(questions=questions), range(8)))
    fields = [field for form in forms for field in form.fields.values()]
    assert len({id(field) for field in fields}) == len(fields)
    assert len({id(field.widget) for field in fields}) == len(fields)
    key = questions[0].key
    forms[0].fields[key].widget.attrs["aria-describedby"] = "one-judges-error"
    assert "one-judges-error" in str(forms[0][key])
    assert all("one-judges-error" not in str(form[key]) for form in forms[1:])
    assert "one-judges-error" not in str(PairForm(questions=questions)[key])
