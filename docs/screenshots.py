"""Retake the README's screenshots: .venv/bin/python docs/screenshots.py [BASE_URL] (needs `make run` serving the demo;
BASE_URL defaults to http://127.0.0.1:8000)."""

import secrets
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

BASE = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000"
OUT = Path(__file__).parent
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]  # fmt: skip


def main() -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{BASE}/admin/login/?next=/dashboard/demo/")
        page.fill("#id_username", "researcher")
        page.fill("#id_password", "moraljudge-demo")
        page.click("input[type=submit]")
        page.wait_for_load_state("networkidle")
        page.screenshot(path=OUT / "dashboard.png", full_page=False)
        page.locator("img[src*='plots/']").first.scroll_into_view_if_needed()
        page.screenshot(path=OUT / "forest-plot.png", full_page=False)

        judge = browser.new_page(viewport={"width": 1280, "height": 900})
        ids = "&".join(f"{name}={secrets.token_hex(12)}" for name in ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID"))
        judge.goto(f"{BASE}/s/demo/?{ids}")
        judge.check("input[name=consent][value=yes]")
        judge.check("input[name=anonymised][value=yes]")
        judge.click("button[type=submit]")
        for name in ("gender", "age", "religion", "education", "country"):
            judge.select_option(f"select[name={name}]", index=1)
        judge.click("button[type=submit]")
        judge.wait_for_load_state("networkidle")
        judge.screenshot(path=OUT / "judging.png", full_page=False)
        browser.close()


if __name__ == "__main__":
    main()
