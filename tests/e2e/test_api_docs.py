"""The API docs in a real browser with no way out to the internet: Swagger UI renders the schema."""

import pytest
from django.contrib.auth import get_user_model


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_researcher_signs_in_and_reads_the_api_docs_without_internet(live_server, browser_context):
    get_user_model().objects.create_user("ada", password="right-password-ada", is_staff=True)
    elsewhere = []

    def only_this_server(route):
        if route.request.url.startswith(live_server.url):
            route.continue_()
        else:  # a CDN, say: refused, and remembered
            elsewhere.append(route.request.url)
            route.abort()

    page = browser_context.new_page()
    page.route("**/*", only_this_server)
    page.goto(f"{live_server.url}/api/docs/")  # the login page first, through the throttled admin form
    page.fill("#id_username", "ada")
    page.fill("#id_password", "right-password-ada")
    page.click("input[type=submit]")
    page.wait_for_url(f"{live_server.url}/api/docs/")
    page.locator(".swagger-ui .info .title").filter(has_text="MoralJudge API").wait_for()
    assert page.locator(".swagger-ui .opblock").count() > 5  # the operations, read from /api/schema/
    assert elsewhere == []
