"""Helpers for the real-browser tests: Chromium's flags and a local stand-in for Prolific."""

import re

# How long a page action or an expect() waits before failing. Generous because `make test` runs two workers
# beside each other (one of them may be starting a Celery worker or R while Chromium renders): it bounds a
# hang, it asserts nothing about speed.
PAGE_TIMEOUT_MS = 30_000

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def stub_prolific(context_or_page) -> list[str]:
    """Answer every request to app.prolific.com locally; returns the URLs asked for, in order."""
    seen: list[str] = []

    def fulfil(route):
        seen.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<h1>Prolific (stub)</h1>")

    context_or_page.route(re.compile(r"^https://app\.prolific\.com/.*"), fulfil)
    return seen
