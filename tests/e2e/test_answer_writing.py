"""The answer-writing survey in headless Chromium: Prolific link → consent → m pages → back to Prolific.

Nothing leaves the machine: the final navigation to app.prolific.com is answered by page.route.
"""

import re

import pytest
from playwright.sync_api import expect

from surveys.models import Answer, Respondent
from tests.e2e.browser import stub_prolific
from tests.surveys.test_respondents import PID, SESSION_ID, STUDY_ID, answering_study


def write_page(page, *, weights: list[int], check_live_total: bool):
    submit = page.get_by_role("button", name="Submit this answer")
    total = page.locator("#weight-total")
    expect(total).to_have_attribute("aria-live", "polite")
    if check_live_total:
        expect(submit).to_be_disabled()
    for number, weight in enumerate(weights, start=1):
        page.fill(f"#id_feature_{number}", f"Feature <{number}>")
        page.fill(f"#id_reason_{number}", f"Reason {number}")
        page.fill(f"#id_weight_{number}", str(weight))
        if check_live_total and number < len(weights):
            expect(total).to_have_text(re.compile(rf"^Weights: {sum(weights[:number])} / 100"))
            expect(submit).to_be_disabled()
    if check_live_total:
        # One off: typed, the total updates and the button stays disabled; corrected, it enables.
        page.fill(f"#id_weight_{len(weights)}", str(weights[-1] - 15))
        expect(total).to_have_text(re.compile(rf"^Weights: {sum(weights) - 15} / 100"))
        expect(submit).to_be_disabled()
        page.fill(f"#id_weight_{len(weights)}", str(weights[-1]))
    expect(total).to_have_text("Weights: 100 / 100")
    expect(submit).to_be_enabled()
    page.fill("#id_action", "Tell the truth, kindly.")
    page.fill("#id_additional_information", "How close are they?")
    submit.click()


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_prolific_respondent_writes_m_answers_with_the_live_weight_check_and_returns_with_the_code(
    live_server, chromium_browser
):
    study = answering_study(m=2, completion_code="JUDGED", answering_completion_code="C0DE42")
    context = chromium_browser.new_context()
    page = context.new_page()
    seen = stub_prolific(page)
    page.goto(f"{live_server.url}/r/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION_ID}")

    page.get_by_label("I agree to take part").check()
    page.get_by_role("button", name="Continue").click()

    expect(page.get_by_role("heading", name="Scenario 1 of 2")).to_be_visible()
    write_page(page, weights=[60, 40], check_live_total=True)
    expect(page.get_by_role("heading", name="Scenario 2 of 2")).to_be_visible()
    write_page(page, weights=[50, 30, 20], check_live_total=False)

    page.wait_for_url(re.compile(r"^https://app\.prolific\.com/"))
    assert seen == ["https://app.prolific.com/submissions/complete?cc=C0DE42"]
    assert Respondent.objects.get().status == Respondent.Status.COMPLETED
    answers = Answer.objects.filter(origin=Answer.Origin.RESPONDENT, system__key="lay")
    assert answers.count() == 2
    assert sorted(a.features.count() for a in answers) == [2, 3]
    context.close()


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_without_javascript_the_server_rejects_weights_off_100_and_keeps_what_was_typed(live_server, chromium_browser):
    study = answering_study(m=1)
    context = chromium_browser.new_context(java_script_enabled=False)
    page = context.new_page()
    stub_prolific(page)
    page.goto(f"{live_server.url}/r/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION_ID}")
    page.get_by_label("I agree to take part").check()
    page.get_by_role("button", name="Continue").click()

    page.fill("#id_feature_1", "Honesty")
    page.fill("#id_weight_1", "60")
    page.fill("#id_feature_2", "Harm")
    page.fill("#id_weight_2", "25")
    page.fill("#id_action", "Tell the truth.")
    page.get_by_role("button", name="Submit this answer").click()

    expect(page.get_by_role("alert")).to_contain_text("Weights: 85 / 100")
    expect(page.locator("#id_weight_2")).to_have_value("25")
    expect(page.locator("#id_feature_2")).to_have_value("Harm")
    expect(page.locator("#id_action")).to_have_value("Tell the truth.")
    assert not Answer.objects.filter(origin=Answer.Origin.RESPONDENT).exists()

    page.fill("#id_weight_2", "40")
    page.get_by_role("button", name="Submit this answer").click()
    expect(page.get_by_role("heading", name="Thank you for your answers")).to_be_visible()
    assert Answer.objects.filter(origin=Answer.Origin.RESPONDENT).count() == 1
    context.close()


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_on_a_phone_the_pages_fit_the_screen_and_work_from_the_keyboard(live_server, chromium_browser):
    study = answering_study(m=1)
    study.vignettes.update(text="<b>Sam</b> found a wallet." + " A long sentence that wraps." * 20)
    context = chromium_browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True)
    page = context.new_page()
    stub_prolific(page)
    page.goto(f"{live_server.url}/r/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION_ID}")

    page.get_by_label("I agree to take part").focus()
    page.keyboard.press("Space")
    expect(page.get_by_label("I agree to take part")).to_be_checked()
    page.keyboard.press("Tab")  # past the second option of the radio group, to Continue
    expect(page.get_by_role("button", name="Continue")).to_be_focused()
    page.keyboard.press("Enter")

    expect(page.get_by_role("heading", name="Scenario 1 of 1")).to_be_visible()
    expect(page.locator(".vignette")).to_contain_text("<b>Sam</b> found a wallet.")  # shown as text, not markup
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")

    page.get_by_label("Feature", exact=True).first.focus()
    page.keyboard.type("Honesty")
    page.keyboard.press("Tab")
    page.keyboard.type("100")
    expect(page.locator("#weight-total")).to_have_text("Weights: 100 / 100")
    page.get_by_label("What should be done? (your conclusion)").focus()
    page.keyboard.type("Return the wallet.")
    page.get_by_role("button", name="Submit this answer").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Thank you for your answers")).to_be_visible()
    assert Answer.objects.get(origin=Answer.Origin.RESPONDENT).action == "Return the wallet."
    context.close()
