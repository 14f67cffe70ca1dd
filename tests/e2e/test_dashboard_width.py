"""Issue 23.6: at 1280 px the dashboard fits: no question's table hides columns behind a scrollbar."""

import pytest
from django.contrib.auth import get_user_model

from analysis.models import AnalysisRun
from analysis.services import refit_study
from surveys.models import System

from ..conftest import make_judged_study
from .test_dashboard_reading import FAST, signed_in

WIDTH = 1280


@pytest.fixture
def widest_dashboard(live_server, db):
    # Every column a question's table can have: the bias-reduced fit on, long system labels.
    study = make_judged_study(participants=30, seed=5, bias_reduced=True)
    System.objects.filter(study=study, key="beta").update(label="Claude 3.7 Sonnet (extended thinking)")
    refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    get_user_model().objects.create_user("researcher", password="pw-12345678", is_staff=True)
    return f"{live_server.url}/dashboard/{study.slug}/"


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_at_1280_px_the_page_and_every_questions_table_fit_without_scrolling(widest_dashboard, chromium_browser):
    context = chromium_browser.new_context(viewport={"width": WIDTH, "height": 900})
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        signed_in(page, widest_dashboard)
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
        boxes = page.eval_on_selector_all(
            "section.question .table-scroll",
            "boxes => boxes.map(b => [b.getAttribute('aria-label'), b.scrollWidth, b.clientWidth])",
        )
        assert len(boxes) >= 5
        hidden = [(label, inside - shown) for label, inside, shown in boxes if inside > shown]
        assert hidden == []  # every column in view, W–L included
        headings = page.locator("section.question table.numbers thead").first.inner_text()
        assert "W–L" in headings
        assert "Maximum likelihood" in headings  # the other fit beside the bias-reduced estimate
    finally:
        context.close()
