"""Issue 23.6: at 1280 px the dashboard fits: each question leads with its headline table, the other intervals
and fits are in a details view beneath it, and no table hides columns behind a scrollbar."""

import tempfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from analysis.models import AnalysisRun
from analysis.services import refit_study
from surveys.models import StudyMembership, System

from ..conftest import make_judged_study
from .browser import PAGE_TIMEOUT_MS
from .test_dashboard_reading import FAST, signed_in

WIDTH = 1280
SHOTS = Path(tempfile.gettempdir()) / "moraljudge-screenshots"  # to look at by eye


@pytest.fixture
def widest_dashboard(live_server, db):
    # Every column a question's table can have: the bias-reduced fit on, long system labels.
    study = make_judged_study(participants=30, seed=5, bias_reduced=True)
    System.objects.filter(study=study, key="beta").update(label="Claude 3.7 Sonnet (extended thinking)")
    refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    researcher = get_user_model().objects.create_user("researcher", password="pw-12345678", is_staff=True)
    StudyMembership.objects.create(study=study, user=researcher, role=StudyMembership.Role.OWNER)
    return f"{live_server.url}/dashboard/{study.slug}/"


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_at_1280_px_each_question_leads_with_its_headline_and_opens_the_other_intervals_below(
    widest_dashboard, chromium_browser
):
    context = chromium_browser.new_context(viewport={"width": WIDTH, "height": 900})
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    try:
        page = context.new_page()
        signed_in(page, widest_dashboard)
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
        assert hidden_by_scrolling(page, "section.question table.headline-table") == []
        headline = page.locator("section.question table.headline-table").first
        assert headline.locator("thead th").all_inner_texts() == [
            "System", "Estimate", "SE", "p", "", "Holm p", "95% CI", "W–L"
        ]  # fmt: skip
        question = page.locator("section.question").first
        assert "t with" in question.locator(".headline-interval").inner_text()  # the interval and its df, named
        # The other intervals and fits wait, closed, under the headline; opened, they fit too.
        details = question.locator("details.other-intervals")
        assert not details.locator("table").first.is_visible()
        details.locator("summary").click()
        others = details.inner_text()
        for heading in (
            "Wald CI (conditional on these answers)",
            "Bootstrap CI",
            "Maximum likelihood",
            "Style-controlled",
        ):
            assert heading in others
        assert "Which interval answers which question" in others
        page.locator("section.question details.other-intervals:not([open]) summary").evaluate_all(
            "summaries => summaries.forEach(s => s.click())"
        )
        assert hidden_by_scrolling(page, "section.question details.other-intervals table") == []
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
        SHOTS.mkdir(exist_ok=True)
        question.screenshot(path=SHOTS / "dashboard-question-1280.png")
    finally:
        context.close()


def hidden_by_scrolling(page, tables: str) -> list[tuple[str, int]]:
    """(region, pixels hidden) of every scrolling box around `tables` that hides part of its table."""
    boxes = page.eval_on_selector_all(
        tables,
        "tables => tables.map(t => { const b = t.closest('.table-scroll');"
        " return [b.getAttribute('aria-label'), b.scrollWidth, b.clientWidth]; })",
    )
    assert len(boxes) >= 5  # one per question at least
    return [(label, inside - shown) for label, inside, shown in boxes if inside > shown]
