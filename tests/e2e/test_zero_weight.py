"""The answer-writing page refuses a zero weight live, as the server and every other surface do."""

import pytest
from playwright.sync_api import expect

from tests.surveys.test_respondents import PID, SESSION_ID, STUDY_ID, answering_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_a_feature_weighted_zero_keeps_the_answer_from_being_sent_and_says_why(live_server, browser_context):
    study = answering_study(m=1)
    page = browser_context.new_page()
    page.goto(f"{live_server.url}/r/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID={STUDY_ID}&SESSION_ID={SESSION_ID}")
    page.get_by_label("I agree to take part").check()
    page.get_by_role("button", name="Continue").click()
    submit = page.get_by_role("button", name="Submit this answer")
    total = page.locator("#weight-total")

    page.fill("#id_feature_1", "Honesty")
    page.fill("#id_weight_1", "100")
    page.fill("#id_feature_2", "Harm")
    page.fill("#id_weight_2", "0")  # the total is 100, but a feature named must carry weight
    expect(total).to_have_text("Weights: 100 / 100 (each weight is a whole number from 1 to 100)")
    expect(submit).to_be_disabled()

    page.fill("#id_weight_1", "90")
    page.fill("#id_weight_2", "10")
    expect(total).to_have_text("Weights: 100 / 100")
    expect(submit).to_be_enabled()
