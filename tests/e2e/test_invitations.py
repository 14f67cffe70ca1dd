"""An expert invitation in two real browsers (issue 9, item 5): the second is refused, the first keeps writing."""

import pytest
from playwright.sync_api import expect

from surveys.models import Answer, Respondent
from surveys.services.respondent_survey import create_invitation
from tests.e2e.test_answer_writing import write_page
from tests.surveys.test_respondents import answering_study


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_an_invitation_opened_in_a_second_browser_is_refused_and_the_first_keeps_working(live_server, chromium_browser):
    study = answering_study(m=2)
    invitation = create_invitation(study=study, system=study.systems.get(key="phil"), label="Prof. X")
    link = f"{live_server.url}/r/{study.slug}/invite/{invitation.token}/"
    first = chromium_browser.new_context()
    second = chromium_browser.new_context()  # another browser: its own cookies
    try:
        expert = first.new_page()
        expert.goto(link)
        expert.get_by_label("I agree to take part").check()
        expert.get_by_role("button", name="Continue").click()
        expect(expert.get_by_role("heading", name="Scenario 1 of 2")).to_be_visible()

        intruder = second.new_page()
        response = intruder.goto(link)
        assert response.status == 403
        expect(intruder.get_by_role("alert")).to_contain_text(
            "This invitation is in use; ask the researcher for a new link."
        )
        response = intruder.goto(f"{live_server.url}/r/{study.slug}/write/1/")
        assert response.status == 403

        write_page(expert, weights=[60, 40], check_live_total=False)
        expect(expert.get_by_role("heading", name="Scenario 2 of 2")).to_be_visible()
        expert.goto(link)  # the link again, in the expert's browser: back on their next page
        expect(expert.get_by_role("heading", name="Scenario 2 of 2")).to_be_visible()
        write_page(expert, weights=[100], check_live_total=False)
        expect(expert.get_by_role("heading", name="Thank you for your answers")).to_be_visible()
    finally:
        first.close()
        second.close()
    respondent = Respondent.objects.get()
    assert respondent.invitation == invitation
    assert respondent.status == Respondent.Status.COMPLETED
    assert Answer.objects.filter(origin=Answer.Origin.RESPONDENT, system__key="phil").count() == 2
