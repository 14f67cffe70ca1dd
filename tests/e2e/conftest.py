"""Real-browser fixtures: Debian's Chromium driven by Python Playwright (never `playwright install`)."""

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from .browser import CHROMIUM_ARGS, PAGE_TIMEOUT_MS

expect.set_options(timeout=PAGE_TIMEOUT_MS)  # expect() waits as long as page actions do

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="session")
def chromium_browser():
    """One headless Chromium for the whole session; each test opens its own context."""
    if not Path(CHROMIUM).exists():
        # A newcomer's laptop may lack Debian's chromium; CI installs it and must never skip.
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package")
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def browser_context(chromium_browser):
    context = chromium_browser.new_context()
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    yield context
    context.close()
