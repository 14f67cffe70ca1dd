"""Every researcher surface requires a login; only the participant pages, the health check and the
signed Prolific webhook are open, and those never show researcher data."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import URLPattern, URLResolver, get_resolver

from .conftest import make_study

# Routes anyone may reach: participants arrive without an account; Prolific signs its webhook; browsers fetch the icon.
OPEN_ROUTES = {"home", "healthz", "prolific_webhook", "favicon"}
OPEN_PREFIXES = ("judging-", "answering-")
SAMPLE_ARGUMENTS = {"slug": "s1", "question": "features", "fmt": "svg", "name": "judgments.csv", "token": "x"}


def routes(resolver=None, prefix=""):
    for pattern in (resolver or get_resolver()).url_patterns:
        if isinstance(pattern, URLResolver):
            yield from routes(pattern, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern


def concrete(path: str) -> str:
    for name, value in SAMPLE_ARGUMENTS.items():
        for converter in ("slug", "str", "int", "path"):
            path = path.replace(f"<{converter}:{name}>", value)
    return "/" + path.replace("<int:position>", "1").replace("<int:study_id>", "1").replace("<int:answer_id>", "1")


def researcher_routes():
    for path, pattern in routes():
        name = pattern.name or ""
        if name in OPEN_ROUTES or name.startswith(OPEN_PREFIXES) or "<" in concrete(path) or "(?P" in path:
            continue
        if path.startswith("admin/") and ("jsi18n" in path or "login" in path or "logout" in path):
            continue
        yield concrete(path)


@pytest.mark.django_db
def test_every_researcher_url_turns_away_an_anonymous_visitor(client):
    make_study(slug="s1")
    checked = 0
    for url in researcher_routes():
        response = client.get(url)
        assert response.status_code in (301, 302, 401, 403, 404), f"{url} answered {response.status_code}"
        if response.status_code in (301, 302):
            assert "login" in response["Location"] or response["Location"].endswith("/"), url
        checked += 1
    assert checked > 30  # the admin, the dashboard and the API were all walked


@pytest.mark.django_db
def test_a_logged_in_participant_like_user_without_staff_rights_sees_no_researcher_data(client):
    make_study(slug="s1")
    user = get_user_model().objects.create_user("judge", password="pw-for-tests-1")
    client.force_login(user)
    for url in ["/dashboard/", "/dashboard/s1/", "/api/studies/", "/api/studies/s1/results/", "/api/schema/"]:
        assert client.get(url).status_code in (302, 403), url


@pytest.mark.django_db
def test_the_api_docs_page_sends_an_anonymous_visitor_to_the_login_page(client):
    response = client.get("/api/docs/")
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")
    client.force_login(get_user_model().objects.create_user("r", password="pw-for-tests-1", is_staff=True))
    assert client.get("/api/docs/").status_code == 200
