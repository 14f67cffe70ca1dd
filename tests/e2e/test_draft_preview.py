"""A researcher tries a draft as a judge in a real browser, from its admin page, in German: nothing is recorded."""

import pytest
from playwright.sync_api import expect

from surveys.models import Cell, Judgment, Participant
from tests.e2e.test_admin_layout import _signed_in_page
from tests.surveys.test_previews import german_draft


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_researcher_previews_a_draft_in_german_from_its_admin_page(live_server, browser_context):
    study = german_draft()
    page = _signed_in_page(browser_context, live_server)
    page.goto(f"{live_server.url}/admin/surveys/study/{study.pk}/change/")
    page.get_by_role("link", name="Preview", exact=True).click()
    page.get_by_role("button", name="Start a preview of the study as it is now").click()
    expect(page.locator("#language-de .untranslated")).to_contain_text("vignette v2 is not translated")
    page.locator("#language-de").get_by_role("link", name="as a judge").click()

    expect(page.locator(".preview-banner")).to_be_visible()
    page.get_by_label("Ja, ich bin mit der Teilnahme einverstanden").check()
    page.get_by_label("Ja, meine anonymisierten Antworten dürfen verwendet werden").check()
    page.locator("form button[type=submit]").click()
    page.locator("select[name=gender]").select_option(index=1)
    page.locator("select[name=age]").select_option(index=1)
    page.locator("select[name=religion]").select_option(index=1)
    page.locator("select[name=education]").select_option(index=1)
    page.locator("select[name=country]").select_option(index=1)
    page.locator("form button[type=submit]").click()
    for number in (1, 2):
        expect(page.locator("#progress-label")).to_have_text(f"Szenario {number} von 2")
        expect(page.locator(".answer")).to_have_count(2)
        for question in study.questions.all():
            page.locator(f"#q-{question.key} input[value=first]").check()
        page.locator("form.questions button[type=submit]").click()
    expect(page.locator("#vignette-title")).to_have_count(0)
    page.locator("input[name=choice][value='2']").check()
    page.locator("form button[type=submit]").click()
    expect(page.locator(".preview-banner")).to_be_visible()
    assert "/done/" in page.url

    assert not Participant.objects.exists()
    assert not Cell.objects.exists()
    assert not Judgment.objects.exists()
