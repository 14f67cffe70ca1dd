"""Heavy reads from a read replica on PostgreSQL: refit and the exports read the replica, pages the primary."""

import pytest


@pytest.fixture(scope="module")
def replica_alias(django_db_setup):
    """A `replica` alias on a database of its own beside the test database (`<test db>_replica`), which the
    test fills by copying the primary. Module-scoped so that it exists before the test's database access is
    set up; TEST MIRROR keeps Django's test machinery from flushing or creating it."""
    from django.db import connections

    from moraljudge.replica import REPLICA

    primary = connections["default"].settings_dict
    connections.settings[REPLICA] = {
        **primary,
        "NAME": f"{primary['NAME']}_{REPLICA}",
        "TEST": {**primary["TEST"], "MIRROR": "default"},
    }
    try:
        yield REPLICA
    finally:
        connections[REPLICA].close()
        del connections[REPLICA]
        del connections.settings[REPLICA]


def maintenance_connection():
    import psycopg
    from django.db import connections

    s = connections["default"].settings_dict
    return psycopg.connect(
        host=s["HOST"] or "127.0.0.1",
        port=s["PORT"] or 5432,
        user=s["USER"],
        password=s["PASSWORD"] or None,
        dbname="postgres",
        autocommit=True,
    )


@pytest.fixture
def replica(replica_alias, settings):
    """The replica's connection, with the router installed as DATABASE_REPLICA_URL installs it."""
    from django.db import connections

    settings.DATABASE_ROUTERS = ["moraljudge.replica.ReplicaRouter"]
    yield connections[replica_alias]
    connections[replica_alias].close()
    with maintenance_connection() as server:
        server.execute(f'DROP DATABASE IF EXISTS "{connections[replica_alias].settings_dict["NAME"]}" WITH (FORCE)')


def copy_primary_to_replica(replica) -> None:
    """What streaming replication does, at one moment: the replica holds the primary's rows."""
    from django.db import connections

    connections.close_all()  # a template database must have no other session …
    primary = connections["default"].settings_dict["NAME"]
    with maintenance_connection() as server:
        # … nor one an earlier test's thread left open in this process (a live server's request, say)
        server.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [primary],
        )
        server.execute(f'DROP DATABASE IF EXISTS "{replica.settings_dict["NAME"]}" WITH (FORCE)')
        server.execute(f'CREATE DATABASE "{replica.settings_dict["NAME"]}" TEMPLATE "{primary}"')


def judgment_reads(queries) -> list[str]:
    """Statements that read the judgments table: queries, server-side cursors, CTEs and COPY alike."""
    reading = ("SELECT", "DECLARE", "WITH", "COPY")
    return [
        q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(reading) and "surveys_judgment" in q["sql"]
    ]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True, databases=["default", "replica"])
def test_on_postgresql_refit_and_exports_read_the_replica_database_and_pages_the_primary(replica, client):
    from django.contrib.auth import get_user_model
    from django.db import connections
    from django.test.utils import CaptureQueriesContext

    from analysis.models import AnalysisRun
    from analysis.services import refit_study
    from moraljudge.replica import analysis_database
    from surveys.models import Judgment, StudyMembership

    from .conftest import make_judged_study

    assert analysis_database() == "replica"
    study = make_judged_study(participants=30)
    staff = get_user_model().objects.create_user("staff", password="pw-for-tests-1", is_staff=True)
    StudyMembership.objects.create(study=study, user=staff, role=StudyMembership.Role.VIEWER)  # a viewer exports
    copy_primary_to_replica(replica)
    on_replica = Judgment.objects.using("replica").valid().for_study(study).count()
    Judgment.objects.all().delete()  # the primary loses them: what refit and exports find can only be the replica's
    assert on_replica > 0

    with CaptureQueriesContext(connections["default"]) as primary:
        run = refit_study(study=study, trigger="on_demand", parameters={"bootstrap": 20, "split_halves": 5})
    assert run.status == "done"
    assert run.n_judgments == on_replica
    assert AnalysisRun.objects.using("replica").filter(pk=run.pk).count() == 0  # the run is written to the primary
    assert not judgment_reads(primary.captured_queries)

    client.force_login(staff)
    for name, rows in (("judgments.csv", on_replica), ("bradleyterry2.csv", on_replica), ("demographics.csv", None)):
        with CaptureQueriesContext(connections["default"]) as primary, CaptureQueriesContext(replica) as read:
            response = client.get(f"/dashboard/{study.slug}/exports/{name}")
            body = b"".join(response.streaming_content).decode()
        assert response.status_code == 200
        assert read.captured_queries, f"{name} was not read from the replica"
        assert not judgment_reads(primary.captured_queries), name
        if rows is not None:
            assert len(body.splitlines()) == 1 + rows, name
    # Every page reads the primary: its own writes, never the replica's lag.
    with CaptureQueriesContext(connections["default"]) as primary, CaptureQueriesContext(replica) as read:
        assert client.get(f"/dashboard/{study.slug}/").status_code == 200
    assert primary.captured_queries
    assert not read.captured_queries


def test_a_streamed_export_reads_the_replica_only_while_its_own_code_runs(replica_alias, settings):
    from django.db import router

    from moraljudge.replica import reads_from_replica
    from surveys.models import Judgment

    settings.DATABASE_ROUTERS = ["moraljudge.replica.ReplicaRouter"]

    @reads_from_replica
    def rows():
        for _ in range(2):
            yield router.db_for_read(Judgment)

    stream = rows()
    assert next(stream) == "replica"
    assert router.db_for_read(Judgment) == "default"  # the response sending a row, or a page served meanwhile
    assert list(stream) == ["replica"]
    assert router.db_for_read(Judgment) == "default"
