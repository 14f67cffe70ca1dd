"""The empty demographics and attention forms: every judge sees them empty, in their own study's language,
whatever an earlier judge sent (each form has its own fields; the fragments are rendered once per snapshot)."""

import pytest

from tests.surveys.test_judging_flow import DEMOGRAPHICS, csrf_client, link, live_study, picks, post


def at_demographics(study, number: int):
    client = csrf_client()
    response = client.get(link(study, pid=f"{number:024x}", session=f"{number + 1000:024x}"))
    response = post(client, response.url, {"consent": "yes", "anonymised": "yes"})
    return client, response.url


def at_check(study, client, url):
    url = post(client, url, DEMOGRAPHICS).url
    while "/pair/" in url:
        url = post(client, url, picks(study)).url
    assert url.endswith("/check/")
    return url


@pytest.mark.django_db
def test_a_judge_never_sees_an_earlier_judges_choices_or_errors():
    study = live_study(slug="english", vignettes=4)
    first, url = at_demographics(study, 1)
    sent_back = post(first, url, {"gender": "Female", "country": "Germany"})  # incomplete
    assert b"Please choose your age group." in sent_back.content
    assert b'value="Germany" selected' in sent_back.content
    second, url_second = at_demographics(study, 2)
    page = second.get(url_second).content
    assert b"Please choose your age group." not in page
    assert b'value="Germany" selected' not in page
    assert b'value="Female" selected' not in page

    check = at_check(study, first, url)
    refused = post(first, check, {})
    assert b"Please choose one of the two options." in refused.content
    page = second.get(at_check(study, second, url_second)).content
    assert b"Please choose one of the two options." not in page
    assert b"checked" not in page


@pytest.mark.django_db
def test_the_empty_forms_are_shown_in_each_studys_language():
    english, german = live_study(slug="english"), live_study(slug="german", language="de")
    shown = [(english, b"Gender", b"Geschlecht"), (german, b"Geschlecht", b">Gender")] * 2
    for number, (study, label, other_language) in enumerate(shown):
        client, url = at_demographics(study, 10 + number)
        page = client.get(url).content
        assert label in page
        assert other_language not in page


def test_a_forms_fields_are_its_own_though_their_lists_of_choices_are_shared():
    from surveys.forms.judging import DemographicsForm

    first = DemographicsForm()
    first.fields["country"].widget.attrs["data-changed"] = "yes"
    first.fields["country"].error_messages["required"] = "changed"
    first.fields["age"].validators.append(lambda value: None)
    second = DemographicsForm()
    assert "data-changed" not in second.fields["country"].widget.attrs
    assert second.fields["country"].error_messages["required"] != "changed"
    assert second.fields["age"].validators == DemographicsForm.base_fields["age"].validators
    assert list(second.fields["country"].choices) == list(DemographicsForm.base_fields["country"].choices)


def test_empty_demographics_and_attention_forms_built_in_many_threads_share_no_field_or_widget():
    from concurrent.futures import ThreadPoolExecutor

    from surveys.forms.judging import AttentionForm, DemographicsForm

    def build(_):
        return [DemographicsForm(), AttentionForm(prompt="Pick the second", options=["one", "two"])]

    with ThreadPoolExecutor(max_workers=4) as pool:
        forms = [form for pair in pool.map(build, range(8)) for form in pair]
    fields = [field for form in forms for field in form.fields.values()]
    assert len({id(field) for field in fields}) == len(fields)
    assert len({id(field.widget) for field in fields}) == len(fields)
    forms[1].fields["choice"].widget.attrs["aria-describedby"] = "one-judges-error"
    assert all("one-judges-error" not in str(form["choice"]) for form in forms[3::2])
