"""Participants doing unexpected things, in headless Chromium: odd answers, narrow screens, lost pages."""

import pytest

from surveys.models import Answer, Feature
from tests.e2e.test_judging_survey import consent_and_demographics, link, live_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

UNBROKEN = "https://example.org/" + "averyverylongpathsegment" * 8


def fits_the_screen(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


@pytest.mark.parametrize("width", [375, 1280])
def test_answers_with_long_unbroken_words_wrap_inside_the_screen(live_server, chromium_browser, width):
    study = live_study(vignettes_per_participant=1, vignettes=1)
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
