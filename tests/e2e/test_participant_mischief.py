"""Participants doing unexpected things, in headless Chromium: odd answers, narrow screens, lost pages."""

import pytest
from playwright.sync_api import expect

from surveys.models import Answer, Feature
from tests.conftest import data_fix
from tests.e2e.test_judging_survey import consent_and_demographics, link, live_study
from tests.surveys.test_respondents import PID, SESSION_ID, STUDY_ID, answering_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

UNBROKEN = "https://example.org/" + "averyverylongpathsegment" * 8


def fits_the_screen(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("width", [375, 1280])
def test_answers_with_long_unbroken_words_wrap_inside_the_screen(live_server, chromium_browser, width):
    study = live_study(vignettes_per_participant=1, vignettes=1)
    with data_fix(study):
        Answer.objects.update(action="Do this: " + "W" * 150, additional_information=UNBROKEN)
        Feature.objects.filter(position=1).update(feature="Z" * 80, reason=f"See {UNBROKEN}")
    context = chromium_browser.new_context(viewport={"width": width, "height": 800})
    try:
        page = context.new_page()
        page.goto(link(live_server, study))
        consent_and_demographics(page)
        page.wait_for_load_state("load")  # the stylesheets are in
        assert fits_the_screen(page)
    finally:
        context.close()


def test_the_live_weight_check_agrees_with_the_server_on_what_a_whole_number_is(live_server, browser_context):
    study = answering_study(m=1)
    page = browser_context.new_page()
    page.goto(f"{live_server.url}/r/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION_ID}")
    page.get_by_label("I agree to take part").check()
    page.get_by_role("button", name="Continue").click()
    submit = page.get_by_role("button", name="Submit this answer")
    total = page.locator("#weight-total")

    page.fill("#id_feature_1", "Honesty")
    page.fill("#id_weight_1", "1e2")  # a number to the browser, not a whole number to the server
    expect(total).to_contain_text("whole number")
    expect(submit).to_be_disabled()

    page.fill("#id_weight_1", "100")
    expect(total).to_have_text("Weights: 100 / 100")
    expect(submit).to_be_enabled()


def test_on_a_phone_a_radio_beside_a_long_label_keeps_its_full_size(live_server, chromium_browser):
    study = live_study()
    context = chromium_browser.new_context(viewport={"width": 375, "height": 740})
    try:
        page = context.new_page()
        page.goto(link(live_server, study))
        page.wait_for_load_state("load")
        widths = {round(radio.bounding_box()["width"]) for radio in page.locator("input[type=radio]").all()}
        assert len(widths) == 1, widths
    finally:
        context.close()


def test_a_keyboard_user_reaches_submit_while_the_weights_are_off_and_is_told_why(live_server, browser_context):
    study = answering_study(m=1)
    page = browser_context.new_page()
    page.goto(f"{live_server.url}/r/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION_ID}")
    page.get_by_label("I agree to take part").check()
    page.get_by_role("button", name="Continue").click()
    submit = page.get_by_role("button", name="Submit this answer")
    page.fill("#id_feature_1", "Honesty")
    page.fill("#id_weight_1", "60")
    page.fill("#id_action", "Tell the truth.")

    page.locator("#id_additional_information").focus()
    page.keyboard.press("Tab")
    expect(submit).to_be_focused()
    expect(submit).to_be_disabled()  # to assistive technology: aria-disabled
    page.keyboard.press("Enter")

    expect(page.locator("#weight-total")).to_be_focused()
    expect(page.locator("#weight-total")).to_have_text("Weights: 60 / 100 (they must add up to 100)")
    assert not Answer.objects.filter(origin=Answer.Origin.RESPONDENT).exists()
