"""Real-browser fixtures: Debian's Chromium driven by Python Playwright (never `playwright install`)."""

import re

import pytest

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


@pytest.fixture(scope="session")
def chromium_browser():
    """One headless Chromium for the whole session; each test opens its own context."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def browser_context(chromium_browser):
    context = chromium_browser.new_context()
    context.set_default_timeout(10_000)
    yield context
    context.close()


def stub_prolific(context_or_page) -> list[str]:
    """Answer every request to app.prolific.com locally; returns the URLs asked for, in order."""
    seen: list[str] = []

    def fulfil(route):
        seen.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<h1>Prolific (stub)</h1>")

    context_or_page.route(re.compile(r"^https://app\.prolific\.com/.*"), fulfil)
    return seen
