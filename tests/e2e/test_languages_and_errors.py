"""Participants in headless Chromium: a German study, a right-to-left study, and an incomplete page's errors."""

import pytest
from playwright.sync_api import expect

from surveys.models import Answer, Feature, Question, Vignette
from tests.conftest import data_fix
from tests.e2e.browser import PAGE_TIMEOUT_MS
from tests.e2e.test_judging_survey import consent_and_demographics, link, live_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

FITS = "document.documentElement.scrollWidth <= window.innerWidth"
# How many lines a cell's text takes: a word broken in the middle ("Irreversibilit / y") takes two.
LINES_OF = "cell => { const r = document.createRange(); r.selectNodeContents(cell); return r.getClientRects().length; }"


def in_browser(chromium_browser, width):
    context = chromium_browser.new_context(viewport={"width": width, "height": 800})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    return context


def german_study():
    study = live_study(vignettes_per_participant=1, vignettes=1, language="de")
    with data_fix(study):
        for vignette in Vignette.objects.filter(study=study):
            vignette.translations = {"de": {"text": "Eine Nachbarin bittet um Hilfe beim Umzug.", "character": "Kim"}}
            vignette.save()
        for answer in Answer.objects.filter(vignette__study=study):
            answer.translations = {"de": {"action": "Helfen.", "features": [{"feature": "Hilfsbereitschaft"}]}}
            answer.save()
        Question.objects.filter(study=study, key="features").update(
            translations={"de": {"text": "Welche Antwort nennt die wichtigeren Merkmale?"}}
        )
    return study


def test_a_german_study_speaks_german_from_consent_to_its_scenario(live_server, browser_context):
    study = german_study()
    page = browser_context.new_page()
    page.goto(link(live_server, study))
    assert page.locator("html").get_attribute("lang") == "de"
    expect(page.locator("#estimated-time")).to_contain_text("Das dauert etwa")
    page.get_by_label("Ja, ich bin mit der Teilnahme einverstanden").check()
    page.get_by_label("Ja, meine anonymisierten Antworten dürfen verwendet werden").check()
    page.get_by_role("button", name="Weiter").click()
    expect(page.get_by_role("heading", name="Über Sie")).to_be_visible()
    page.get_by_label("Geschlecht", exact=True).select_option("Non-binary")
    page.get_by_label("Alter").select_option("35-44")
    page.get_by_label("Religion", exact=True).select_option("Buddhism")
    page.get_by_label("Höchster abgeschlossener Bildungsabschluss").select_option("PhD")
    page.get_by_label("Wohnsitzland").select_option("Germany")
    page.get_by_role("button", name="Weiter zu den Szenarien").click()

    expect(page.locator("#progress-label")).to_have_text("Szenario 1 von 1")
    expect(page.get_by_role("heading", name="Das Szenario")).to_be_visible()
    expect(page.locator(".vignette-text")).to_have_text("Eine Nachbarin bittet um Hilfe beim Umzug.")
    expect(page.get_by_role("heading", name="Antwort A")).to_be_visible()
    expect(page.locator("td.feature-name").first).to_have_text("Hilfsbereitschaft")
    expect(page.locator(".action").first).to_have_text("Helfen.")
    expect(page.locator("#q-features legend")).to_have_text("1. Welche Antwort nennt die wichtigeren Merkmale?")
    expect(page.get_by_role("button", name="Szenarien abschließen")).to_be_visible()


@pytest.mark.parametrize("width", [375, 1280])
def test_a_right_to_left_study_is_mirrored_and_fits_the_screen(live_server, chromium_browser, width):
    study = live_study(vignettes_per_participant=1, vignettes=1, language="ar")
    with data_fix(study):
        Vignette.objects.filter(study=study).update(text="جار يطلب المساعدة في الانتقال إلى منزل جديد.")
    context = in_browser(chromium_browser, width)
    try:
        page = context.new_page()
        page.goto(link(live_server, study))
        consent_and_demographics(page)  # the interface falls back to English
        page.wait_for_load_state("load")
        assert page.locator("html").get_attribute("dir") == "rtl"
        assert page.evaluate(FITS)
        body = page.locator("main").bounding_box()
        title = page.locator("#vignette-title").bounding_box()
        # Mirrored: headings start at the right edge of the page.
        assert title["x"] + title["width"] > body["x"] + body["width"] - 80
        if width >= 1280:  # side by side, Answer A is on the right
            a, b = page.locator("article.answer").all()
            assert a.bounding_box()["x"] > b.bounding_box()["x"]
        radio = page.locator("#q-features input[type=radio]").first.bounding_box()
        label = page.locator("#q-features label").first.bounding_box()
        assert radio["x"] > label["x"]  # the radio comes first, on the right of its label
    finally:
        context.close()


def test_an_incomplete_page_comes_back_with_the_summary_first_and_focused(live_server, browser_context):
    study = live_study(vignettes_per_participant=1, vignettes=1)
    page = browser_context.new_page()
    page.goto(link(live_server, study))
    consent_and_demographics(page)
    keys = list(study.questions.order_by("position").values_list("key", flat=True))
    for key in keys[:3]:  # two questions left open
        page.locator(f"#q-{key} input[value=first]").check()
    page.locator("form.questions button[type=submit]").click()

    summary = page.locator("#error-summary")
    expect(summary).to_be_focused()
    assert page.evaluate("document.getElementById('error-summary').getBoundingClientRect().top") < 250
    assert page.evaluate("window.scrollY") < 100  # the page did not jump down to the questions
    expect(summary.locator("li")).to_have_count(2)
    # Before the scenario in the page's order, so a screen reader reads it first.
    assert page.evaluate(
        "document.getElementById('error-summary').compareDocumentPosition(document.querySelector('.vignette'))"
        " & Node.DOCUMENT_POSITION_FOLLOWING"
    )

    # Answering a question clears its message and its line in the summary; the last one hides the summary.
    page.locator(f"#q-{keys[3]} input[value=second]").check()
    expect(page.locator(f"#q-{keys[3]}")).not_to_have_class("question has-error")
    expect(page.locator(f"#q-{keys[3]} .errorlist")).to_have_count(0)
    expect(summary.locator("li")).to_have_count(1)
    page.locator(f"#q-{keys[4]} input[value=second]").check()
    expect(summary).to_be_hidden()
    page.locator("form.questions button[type=submit]").click()
    expect(page.get_by_role("heading", name="One last question")).to_be_visible()


@pytest.mark.parametrize("width", [375, 1280])
def test_long_question_titles_sit_inside_their_box_and_feature_names_keep_whole_words(
    live_server, chromium_browser, width
):
    study = live_study(vignettes_per_participant=1, vignettes=1)
    long_title = "Which answer names the morally relevant features better, " * 3
    with data_fix(study):
        Question.objects.filter(study=study, key="features").update(text=long_title.strip())
        Feature.objects.filter(position=1).update(
            feature="Irreversibility", reason="Once done it cannot be undone, " * 12
        )
    context = in_browser(chromium_browser, width)
    try:
        page = context.new_page()
        page.goto(link(live_server, study))
        consent_and_demographics(page)
        page.wait_for_load_state("load")
        box = page.locator("#q-features").bounding_box()
        legend = page.locator("#q-features legend").bounding_box()
        assert legend["height"] > 30  # two lines or more
        assert legend["y"] >= box["y"] + 1  # inside the border, not drawn across it
        for cell in page.locator("td.feature-name").all():
            if cell.inner_text() == "Irreversibility":
                assert cell.evaluate(LINES_OF) == 1
        assert page.evaluate(FITS)
    finally:
        context.close()
