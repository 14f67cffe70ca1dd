"""The two entry refusals of issue 9 as a participant sees them, in headless Chromium: another session of
the same Prolific participant (409), and too many new entries from one address (429)."""

import pytest
from playwright.sync_api import expect

from surveys.models import Participant
from tests.e2e.test_judging_survey import PID, STUDY_ID, live_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def study_link(live_server, study, pid, session):
    return f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID={STUDY_ID}&SESSION_ID={session}"


def test_another_session_and_a_flood_each_get_a_page_that_says_what_to_do(live_server, chromium_browser, settings):
    settings.ENTRY_RATE_LIMIT = "2/10m"  # every browser here comes from 127.0.0.1
    study = live_study()
    first, second, third = (chromium_browser.new_context() for _ in range(3))
    try:
        owner = first.new_page()
        owner.goto(study_link(live_server, study, PID, "70aa11bb22cc33dd44ee55ff"))
        expect(owner.get_by_label("Yes, I agree to take part")).to_be_visible()

        intruder = second.new_page()
        response = intruder.goto(study_link(live_server, study, PID, "71aa11bb22cc33dd44ee55ff"))
        assert response.status == 409
        expect(intruder.get_by_role("heading", level=1)).to_have_text("We could not open the study")
        expect(intruder.locator(".problems")).to_contain_text("Please continue it in the browser where you started")

        third.new_page().goto(study_link(live_server, study, "a" * 24, "b" * 24))  # the address's second entry
        flooder = third.new_page()
        response = flooder.goto(study_link(live_server, study, "c" * 24, "d" * 24))
        assert response.status == 429
        expect(flooder.locator(".problems")).to_contain_text("please wait 10 minutes and open the study link again")
        assert sorted(Participant.objects.values_list("prolific_pid", flat=True)) == sorted([PID, "a" * 24])
    finally:
        for context in (first, second, third):
            context.close()
