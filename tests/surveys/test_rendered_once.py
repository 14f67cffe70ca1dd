"""A live study's answer cards, vignette and unfilled forms are rendered once per process ({% rendered_once %}),
and judges still see exactly what their own page should show."""

import re

import pytest
from django.core.cache import caches
from django.template import Context, Template
from django.template.loader import render_to_string
from django.utils import translation

from surveys.models import Answer, Participant
from surveys.services.lifecycle import go_live
from surveys.services.snapshots import replace_snapshot
from surveys.templatetags import study_language
from tests.conftest import make_study
from tests.surveys.test_judging_flow import DEMOGRAPHICS, PID, csrf_client, link, post, through_demographics

SCRIPT = "<script>alert('x')</script> & more"
ESCAPED = "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; more"


@pytest.fixture(autouse=True)
def no_fragments_from_other_tests():
    caches["rendered"].clear()


def hostile_live_study(answer_translations=None, **kwargs):
    """A live study of two systems whose every answer's conclusion is a script (answers are untrusted text),
    each ending with its own number."""
    study = make_study(systems=("alpha", "beta"), vignettes=2, vignettes_per_participant=2, minimum_seconds=0, **kwargs)
    for answer in Answer.objects.filter(vignette__study=study):
        Answer.objects.filter(pk=answer.pk).update(
            action=f"{SCRIPT} #{answer.pk}", translations=answer_translations or {}
        )
    return go_live(study=study)


def cards(html: str) -> list[str]:
    """The conclusions of the page's answer cards, A then B, as the page shows them (escaped)."""
    return re.findall(r'<div class="action" dir="auto"><p>(.*?)</p></div>', html)


def expected_cards(participant: Participant) -> list[str]:
    page = participant.assignments.get(position=1)
    return [f"{ESCAPED} #{page.first_answer_id}", f"{ESCAPED} #{page.second_answer_id}"]


def answer_texts_rendered(monkeypatch) -> list:
    """The answers whose texts the next renders look up (the `in_language` filter), in order."""
    looked_up: list = []
    original = study_language.translated

    def counting(obj, field, language=None):
        if isinstance(obj, Answer):
            looked_up.append(obj.pk)
        return original(obj, field, language)

    monkeypatch.setattr(study_language, "translated", counting)
    return looked_up


def without_csrf(html: str) -> str:
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", html)


@pytest.mark.django_db
def test_an_answer_with_a_script_is_still_escaped_on_the_pair_page_after_a_cache_hit(monkeypatch):
    study = hostile_live_study()
    client = csrf_client()
    pair_url = through_demographics(client, study).url
    first = client.get(pair_url).content.decode()
    looked_up = answer_texts_rendered(monkeypatch)

    again = client.get(pair_url).content.decode()  # the same page reloaded: both cards from the cache

    assert looked_up == []  # the cards were not rendered again
    assert cards(again) == expected_cards(Participant.objects.get(prolific_pid=PID))
    assert "<script>alert" not in again
    assert without_csrf(again) == without_csrf(first)


@pytest.mark.django_db
def test_each_judge_sees_their_own_pair_of_cards_in_their_own_order():
    study = hostile_live_study()
    pages = []
    for number in range(4):  # one vignette's two answers per page: judges share cards, A and B either way
        client = csrf_client()
        pid, session = f"5f0c8a1b2c3d4e5f6a7b8c0{number}", f"70aa11bb22cc33dd44ee550{number}"
        response = post(
            client, client.get(link(study, pid=pid, session=session)).url, {"consent": "yes", "anonymised": "yes"}
        )
        html = client.get(post(client, response.url, DEMOGRAPHICS).url).content.decode()
        pages.append((Participant.objects.get(prolific_pid=pid), html))

    for participant, html in pages:
        assert cards(html) == expected_cards(participant)
        assert "<script>alert" not in html
        assert "checked" not in html
        assert re.findall(r'<h2 id="answer-(.)">Answer (.)</h2>', html) == [("A", "A"), ("B", "B")]


@pytest.mark.django_db
def test_the_same_cards_in_a_second_language_are_rendered_in_that_language():
    study = hostile_live_study(answer_translations={"de": {"action": "Die Geldbörse abgeben."}})
    client = csrf_client()
    response = client.get(through_demographics(client, study).url)  # English: the cards are cached in English
    context = {name: response.context[name] for name in ("participant", "step", "form", "page")}

    with translation.override("de"):
        german = render_to_string("surveys/judging/pair.html", context)
    with translation.override("en"):
        english = render_to_string("surveys/judging/pair.html", context)

    assert cards(german) == ["Die Geldbörse abgeben.", "Die Geldbörse abgeben."]
    assert 'data-label="Gewicht"' in german
    assert "Antwort A" in german
    assert cards(english) == cards(response.content.decode())
    assert "Gewicht" not in english
    assert "Geldbörse" not in english


@pytest.mark.django_db
def test_a_page_sent_back_with_errors_keeps_the_judges_choice_after_a_cached_page():
    study = hostile_live_study()
    client = csrf_client()
    pair_url = through_demographics(client, study).url
    assert "checked" not in client.get(pair_url).content.decode()  # the unfilled radios, now cached

    page = post(client, pair_url, {"features": "second"}).content.decode()

    assert re.search(r'name="features" value="second" id="id_features_1" required checked', page)
    assert page.count("Please choose Answer A or Answer B.") == 4  # the four questions still open


@pytest.mark.django_db
def test_the_about_you_page_sent_back_with_errors_keeps_the_chosen_country_after_a_cached_page():
    study = hostile_live_study()
    client = csrf_client()
    about_you = post(client, client.get(link(study)).url, {"consent": "yes", "anonymised": "yes"}).url
    assert "selected" not in client.get(about_you).content.decode().replace('value="" selected', "")

    page = post(client, about_you, {**DEMOGRAPHICS, "age": "", "country": "Germany"}).content.decode()

    assert '<option value="Germany" selected>Germany</option>' in page
    assert "Please choose your age group." in page
    assert Participant.objects.get(prolific_pid=PID).demographics == {}


@pytest.mark.django_db
def test_a_drafts_fragment_is_rendered_afresh_every_time():
    draft = make_study()
    fragment = Template('{% load rendered_once %}{% rendered_once study "text" %}{{ text }}{% endrendered_once %}')

    assert fragment.render(Context({"study": draft, "text": "first"})) == "first"
    assert fragment.render(Context({"study": draft, "text": "edited"})) == "edited"

    live = go_live(study=draft)
    assert fragment.render(Context({"study": live, "text": "as it went live"})) == "as it went live"
    assert fragment.render(Context({"study": live, "text": "ignored"})) == "as it went live"


@pytest.mark.django_db
def test_a_replaced_snapshot_is_rendered_afresh():
    study = go_live(study=make_study())
    fragment = Template('{% load rendered_once %}{% rendered_once study "text" %}{{ text }}{% endrendered_once %}')
    assert fragment.render(Context({"study": study, "text": "before"})) == "before"
    assert fragment.render(Context({"study": study, "text": "after"})) == "before"  # the same snapshot

    study = replace_snapshot(study=study).study

    assert fragment.render(Context({"study": study, "text": "after"})) == "after"


@pytest.mark.django_db
def test_each_page_shows_its_own_progress_and_button_after_the_others_were_cached():
    study = hostile_live_study()  # two pages a judge
    shown = []
    for number in range(2):  # the second judge's pages come from the first one's fragments
        client = csrf_client()
        pid, session = f"5f0c8a1b2c3d4e5f6a7b8c1{number}", f"70aa11bb22cc33dd44ee551{number}"
        response = post(
            client, client.get(link(study, pid=pid, session=session)).url, {"consent": "yes", "anonymised": "yes"}
        )
        url = post(client, response.url, DEMOGRAPHICS).url
        for _page in range(2):
            html = client.get(url).content.decode()
            shown.append(
                (
                    re.search(r"<title>(.*?) ·", html).group(1),
                    re.search(r'<p id="progress-label">(.*?)</p>', html).group(1),
                    re.search(r'<progress max="(\d)" value="(\d)"', html).groups(),
                    re.search(r'<button type="submit">(.*?)</button>', html).group(1),
                )
            )
            url = post(client, url, dict.fromkeys(study.questions.values_list("key", flat=True), "first")).url

    first_judge = [
        ("Scenario 1 of 2", "Scenario 1 of 2", ("2", "0"), "Next scenario"),
        ("Scenario 2 of 2", "Scenario 2 of 2", ("2", "1"), "Finish the scenarios"),
    ]
    assert shown == first_judge * 2
