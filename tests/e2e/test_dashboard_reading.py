"""The dashboard in Chromium: plots that say what each mark is, and a page that fits a phone."""

import re

import pytest
from django.contrib.auth import get_user_model

from analysis.models import AnalysisRun
from analysis.services import refit_study
from surveys.models import Question, StudyMembership, System
from surveys.models.freeze import freeze_lifted

from ..conftest import QUESTION_KEYS, make_judged_study
from .browser import PAGE_TIMEOUT_MS

FAST = {"bootstrap": 50, "split_halves": 10}


@pytest.fixture
def dashboard(live_server, db):
    study = make_judged_study(participants=30, seed=5)
    # Long labels: the widest a real study's table gets.
    System.objects.filter(study=study, key="beta").update(label="Claude 3.7 Sonnet (extended thinking)")
    with freeze_lifted():  # the study is live: its questions are frozen to everything but a data fix
        Question.objects.filter(study=study, key="weighting").update(label="Weighing the features")
    refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    researcher = get_user_model().objects.create_user("researcher", password="pw-12345678", is_staff=True)
    StudyMembership.objects.create(study=study, user=researcher, role=StudyMembership.Role.OWNER)
    return f"{live_server.url}/dashboard/{study.slug}/"


def signed_in(page, url: str) -> None:
    page.goto(url)
    page.fill("#id_username", "researcher")
    page.fill("#id_password", "pw-12345678")
    page.click("input[type=submit]")
    page.wait_for_url(url)
    page.wait_for_load_state("load")


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_each_plot_loads_under_its_questions_label_with_alt_text_naming_every_mark(dashboard, browser_context):
    page = browser_context.new_page()
    signed_in(page, dashboard)
    headings = page.locator("section.question h2").all_inner_texts()
    assert headings == ["Features", "Weighing the features", "Reasons", "Conclusion", "Additional information"]
    plots = page.locator("img.forest")
    assert plots.count() == len(QUESTION_KEYS)
    assert all(page.eval_on_selector_all("img.forest", "imgs => imgs.map(i => i.complete && i.naturalWidth > 0)"))
    alt = plots.nth(4).get_attribute("alt")
    assert alt.startswith("Forest plot of Additional information for Study judged. ")
    for mark in (
        "Blue dot and bar: estimate and 95% Judge × vignette CR2 CI, t ",  # the headline: the main bar
        "thin brown bar: 95% Wald CI (conditional on these answers)",
        "thin grey bar: 95% Bootstrap CI (judges resampled)",
        "thin green dotted bar: 95% Judge × answer bootstrap CI",
        "black diamond: reference system (0 by definition)",
        "dotted line: 0: as good as the reference",
    ):
        assert mark in alt
    # The legend is drawn in the image itself: the SVG the page shows has its texts.
    svg = page.request.get(plots.nth(4).evaluate("img => img.src")).text()
    assert "95% Bootstrap CI (judges resampled)" in svg
    assert "additional_info" not in svg


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_on_a_phone_the_page_fits_its_width_and_wide_tables_scroll_in_their_own_box(dashboard, chromium_browser):
    context = chromium_browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        page = context.new_page()
        signed_in(page, dashboard)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        for widths in page.eval_on_selector_all(
            "img.forest", "imgs => imgs.map(i => [i.getBoundingClientRect().right, i.naturalWidth])"
        ):
            assert widths[0] <= 390  # scaled down to the screen
        assert_plots_readable(page)
        table = page.locator("#q-features .table-scroll").first
        inside, shown = table.evaluate("box => [box.scrollWidth, box.clientWidth]")
        assert inside > shown  # the table is wider than the phone: it scrolls in its box
        # The other intervals and fits, and the per-vignette table, open and scroll in their own boxes too.
        page.locator("#q-features details summary").evaluate_all("summaries => summaries.forEach(s => s.click())")
        assert page.locator("#q-features details[open]").count() == 2
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert re.search(r"Style-controlled: Each system's ability", page.locator("#q-features").inner_text())
        # Two studies side by side: the wide comparison plot scales down too.
        other = make_judged_study(slug="exp2", participants=20, seed=9)
        researcher = get_user_model().objects.get(username="researcher")  # one can compare only one's own studies
        StudyMembership.objects.create(study=other, user=researcher, role=StudyMembership.Role.OWNER)
        refit_study(study=other, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
        page.goto(f"{dashboard}?compare=exp2")
        page.wait_for_load_state("load")
        assert (
            page.locator("img.forest")
            .first.get_attribute("alt")
            .startswith("Forest plots of Features: Study judged beside Study exp2. Blue dot and bar:")
        )
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        assert_plots_readable(page)
    finally:
        context.close()


# The plots' text is drawn at 8 points (legend, labels): on screen at least 10 px when the plot is shown at
# 90% or more of its natural size. The wide plot at 390 px was shown at about 55%: 6 px text.
READABLE_SCALE = 0.9


def assert_plots_readable(page) -> None:
    """Each plot on a phone is the narrow one, shown near its natural size."""
    page.wait_for_function("[...document.images].every(i => i.complete)")
    shown = page.eval_on_selector_all(
        "img.forest", "imgs => imgs.map(i => [i.currentSrc, i.getBoundingClientRect().width / i.naturalWidth])"
    )
    assert shown
    for source, scale in shown:
        assert "width=narrow" in source
        assert scale >= READABLE_SCALE, (source, scale)
