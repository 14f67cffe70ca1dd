"""A kept database connection that the server dropped costs a reconnect, never a participant's page."""

from contextlib import contextmanager
from wsgiref.util import setup_testing_defaults

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection

from surveys.models import Study
from surveys.services.lifecycle import go_live

from .conftest import make_study


def serve(handler: WSGIHandler, path: str, query: str) -> int:
    """One request through the WSGI handler in this thread, as a gunicorn sync worker serves it."""
    environ = {"PATH_INFO": path, "QUERY_STRING": query, "HTTP_HOST": "127.0.0.1"}
    setup_testing_defaults(environ)
    status = []
    body = handler(environ, lambda line, headers, exc_info=None: status.append(line))
    b"".join(body)
    body.close()  # request_finished: the connection is kept (CONN_MAX_AGE), as between a worker's requests
    return int(status[0].split()[0])


def terminate_backend(pid: int) -> None:
    other = connection.copy()
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])  # waits until it is gone
            assert cursor.fetchone()[0] is True
    finally:
        other.close()


@contextmanager
def health_checks(enabled: bool):
    saved = connection.settings_dict["CONN_HEALTH_CHECKS"]
    connection.settings_dict["CONN_HEALTH_CHECKS"] = enabled
    connection.close()  # the next connection reads the setting
    try:
        yield
    finally:
        connection.settings_dict["CONN_HEALTH_CHECKS"] = saved
        connection.close()


def entry(person: int) -> str:
    return f"PROLIFIC_PID={person:024x}&STUDY_ID={'d' * 24}&SESSION_ID={person + 1:024x}"


def page_after_the_connection_is_terminated(*, enabled: bool) -> int:
    study = go_live(study=make_study(slug=f"conn-{int(enabled)}"))
    handler = WSGIHandler()
    with health_checks(enabled):
        assert serve(handler, f"/s/{study.slug}/", entry(1)) == 302  # a judge arrives: on to consent
        kept = connection.connection
        assert kept is not None  # kept open for the next request
        terminate_backend(kept.info.backend_pid)  # a database restart, a failover, an idle timeout
        return serve(handler, f"/s/{study.slug}/", entry(2))


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_terminated_kept_connection_is_replaced_before_the_next_page_uses_it(settings):
    assert settings.DATABASES["default"]["CONN_MAX_AGE"] > 0
    assert settings.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True
    assert page_after_the_connection_is_terminated(enabled=True) == 302


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_without_health_checks_the_same_page_would_be_a_server_error():
    # The setting is what makes the difference: the same sequence with it off loses the judge's page.
    assert page_after_the_connection_is_terminated(enabled=False) == 500


@pytest.mark.postgres
@pytest.mark.django_db
def test_a_statement_a_connection_repeats_is_planned_once_as_a_prepared_statement():
    study = make_study(slug="prepared")
    for _ in range(3):  # a judging page's reads, request after request on one kept connection
        list(Study.objects.filter(slug=study.slug).values_list("pk", flat=True))
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any('FROM "surveys_study"' in statement for statement in prepared), prepared
