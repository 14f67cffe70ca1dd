"""A researcher builds a new study in the admin in a real browser: the method's questions are there, and
the reference system is named before the first save."""

import pytest

from surveys.models import METHOD_QUESTIONS, Study
from tests.e2e.test_admin_layout import _signed_in_page


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_researcher_builds_a_study_with_its_reference_in_one_save(live_server, browser_context):
    page = _signed_in_page(browser_context, live_server)
    page.goto(f"{live_server.url}/admin/surveys/study/add/")
    assert page.input_value("#id_questions-0-key") == "features"
    assert page.input_value("#id_questions-4-key") == "additional_info"

    page.fill("#id_name", "Workplace dilemmas")  # the slug fills itself from the name
    for index, (key, label) in enumerate([("gpt-4o", "GPT-4o"), ("lay-human", "Lay human")]):
        page.click("#systems-group .add-row a")
        page.fill(f"#id_systems-{index}-key", key)
        page.fill(f"#id_systems-{index}-label", label)
        page.select_option(f"#id_systems-{index}-kind", "human")
    page.fill("#id_reference_key", "lay-human")
    page.click("input[name=_continue]")
    page.locator(".messagelist .success").wait_for()

    study = Study.objects.get(slug="workplace-dilemmas")
    assert list(study.questions.values_list("key", "text")) == METHOD_QUESTIONS
    assert study.reference_system.key == "lay-human"
    # From now on the reference is chosen from the study's own systems.
    assert page.locator("#id_reference_system option:checked").inner_text() == "Lay human"
