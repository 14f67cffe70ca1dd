"""The judging survey in headless Chromium: Prolific link → consent → demographics → k pairs →
attention check → back to Prolific with the completion code. Nothing leaves the machine: the
navigation to app.prolific.com is answered by a Playwright route."""

import re

import pytest
from playwright.sync_api import expect

from surveys.models import Answer, Judgment, Participant
from surveys.services.lifecycle import go_live
from tests.conftest import data_fix, make_study
from tests.e2e.browser import PAGE_TIMEOUT_MS, stub_prolific

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PID = "5f0c8a1b2c3d4e5f6a7b8c9d"
STUDY_ID = "60aa11bb22cc33dd44ee55ff"
SESSION = "70aa11bb22cc33dd44ee55ff"


def live_study(**kwargs):
    kwargs.setdefault("vignettes", 4)
    kwargs.setdefault("vignettes_per_participant", 3)
    kwargs.setdefault("minimum_seconds", 0)
    kwargs.setdefault("completion_code", "C0DE42")
    return go_live(study=make_study(**kwargs))


def link(live_server, study, pid=PID):
    return f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION}"


def consent_and_demographics(page):
    expect(page.get_by_role("heading", level=1)).to_contain_text("Study")
    page.get_by_label("Yes, I agree to take part").check()
    page.get_by_label("Yes, my anonymised answers may be used").check()
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name="About you")).to_be_visible()
    page.get_by_label("Gender", exact=True).select_option("Non-binary")
    page.get_by_label("Age").select_option("35-44")
    page.get_by_label("Religion", exact=True).select_option("Buddhism")
    page.get_by_label("Highest level of education completed").select_option("PhD")
    page.get_by_label("Country of residence").select_option("New Zealand")
    page.get_by_role("button", name="Continue to the scenarios").click()


def answer_pair(page, study, side="first"):
    for question in study.questions.all():
        page.locator(f"#q-{question.key} input[value={side}]").check()
    page.locator("form.questions button[type=submit]").click()


def test_a_judge_goes_from_the_prolific_link_to_prolific_with_the_completion_code(live_server, browser_context):
    study = live_study()
    seen = stub_prolific(browser_context)
    page = browser_context.new_page()
    page.goto(link(live_server, study))
    consent_and_demographics(page)
    for number in range(1, 4):
        expect(page.locator("#progress-label")).to_have_text(f"Scenario {number} of 3")
        expect(page.get_by_role("heading", name="Answer A")).to_be_visible()
        expect(page.get_by_role("heading", name="Answer B")).to_be_visible()
        answer_pair(page, study, "first" if number % 2 else "second")
    expect(page.get_by_role("heading", name="One last question")).to_be_visible()
    page.get_by_label("I read the answers carefully").check()
    page.get_by_role("button", name="Finish").click()
    expect(page.locator(".code")).to_have_text("C0DE42")
    page.wait_for_url(re.compile(r"^https://app\.prolific\.com/"))  # the meta refresh, without any script
    assert page.url == "https://app.prolific.com/submissions/complete?cc=C0DE42"
    assert seen == ["https://app.prolific.com/submissions/complete?cc=C0DE42"]
    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.status == Participant.Status.COMPLETED
    assert participant.demographics["country"] == "New Zealand"
    assert Judgment.objects.valid().count() == 15


def test_a_judging_page_can_be_answered_with_the_keyboard_alone(live_server, browser_context):
    study = live_study(vignettes_per_participant=1, vignettes=1)
    page = browser_context.new_page()
    page.goto(link(live_server, study))
    consent_and_demographics(page)
    page.locator("input[type=radio]").first.focus()
    for _ in study.questions.all():
        page.keyboard.press("Space")  # choose Answer A in this question's group
        page.keyboard.press("Tab")  # on to the next group (then the button)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="One last question")).to_be_visible()
    assert list(Judgment.objects.values_list("winner_position", flat=True)) == ["first"] * 5


def test_an_answer_containing_markup_is_shown_as_text(live_server, browser_context):
    study = live_study(vignettes_per_participant=1, vignettes=1)
    with data_fix(study):  # live: the markup arrives as a data fix, served from the replaced snapshot
        Answer.objects.update(action="<script>window.pwned = 1</script><b>bold?</b>")
    page = browser_context.new_page()
    page.goto(link(live_server, study))
    consent_and_demographics(page)
    expect(page.locator(".action").first).to_have_text("<script>window.pwned = 1</script><b>bold?</b>")
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator(".action b").count() == 0


def test_a_malformed_link_gets_a_clear_page(live_server, browser_context):
    study = live_study()
    page = browser_context.new_page()
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID=abc&STUDY_ID=&SESSION_ID={SESSION}")
    expect(page.get_by_role("heading", name="We could not open the study")).to_be_visible()
    expect(page.locator(".problems")).to_contain_text("PROLIFIC_PID is not a Prolific id")
    expect(page.locator(".problems")).to_contain_text("STUDY_ID is missing")


def test_closing_the_tab_and_opening_the_link_again_resumes_on_the_same_pair(
    live_server, browser_context, chromium_browser
):
    study = live_study()
    page = browser_context.new_page()
    page.goto(link(live_server, study))
    consent_and_demographics(page)
    answer_pair(page, study)
    expect(page.locator("#progress-label")).to_have_text("Scenario 2 of 3")
    shown = page.locator(".pair").inner_text()
    page.close()

    again = browser_context.new_page()
    again.goto(link(live_server, study))
    expect(again.locator("#progress-label")).to_have_text("Scenario 2 of 3")
    assert again.locator(".pair").inner_text() == shown

    elsewhere = chromium_browser.new_context()  # another browser altogether: found by PROLIFIC_PID
    try:
        other = elsewhere.new_page()
        other.goto(link(live_server, study))
        expect(other.locator("#progress-label")).to_have_text("Scenario 2 of 3")
        assert other.locator(".pair").inner_text() == shown
    finally:
        elsewhere.close()


def test_a_double_click_on_next_records_the_page_once(live_server, browser_context):
    study = live_study()
    page = browser_context.new_page()
    page.goto(link(live_server, study))
    consent_and_demographics(page)
    for question in study.questions.all():
        page.locator(f"#q-{question.key} input[value=second]").check()
    page.locator("form.questions button[type=submit]").dblclick()
    expect(page.locator("#progress-label")).to_have_text("Scenario 2 of 3")
    page.go_back()  # page 1 is done: the server sends the judge on to where they are
    expect(page.locator("#progress-label")).to_have_text("Scenario 2 of 3")
    assert Judgment.objects.count() == 5
    assert set(Judgment.objects.values_list("winner_position", flat=True)) == {"second"}


def test_the_two_answers_stack_on_a_phone(live_server, chromium_browser):
    study = live_study(vignettes_per_participant=1, vignettes=1)
    context = chromium_browser.new_context(viewport={"width": 375, "height": 740})
    try:
        page = context.new_page()
        page.goto(link(live_server, study))
        consent_and_demographics(page)
        a, b = page.locator("article.answer").all()
        box_a, box_b = a.bounding_box(), b.bounding_box()
        assert box_b["y"] >= box_a["y"] + box_a["height"]
        assert box_a["width"] > 300
    finally:
        context.close()


def test_the_whole_survey_works_without_javascript(live_server, chromium_browser):
    study = live_study(vignettes_per_participant=2)
    context = chromium_browser.new_context(java_script_enabled=False)
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        stub_prolific(context)
        page = context.new_page()
        page.goto(link(live_server, study))
        consent_and_demographics(page)
        answer_pair(page, study, "first")
        answer_pair(page, study, "second")
        page.get_by_label("I read the answers carefully").check()
        page.get_by_role("button", name="Finish").click()
        page.wait_for_url(re.compile(r"^https://app\.prolific\.com/"))
        assert page.url == "https://app.prolific.com/submissions/complete?cc=C0DE42"
    finally:
        context.close()
