"""CSV exports stream: rows leave as they are read, through the one cell escaper, with the same text as before."""

import csv
import io

import pytest
from django.db import connection
from rest_framework.test import APIClient

from analysis import exports, rscript
from analysis.csv_text import csv_cell
from analysis.models import AnalysisRun
from analysis.services import refit_study

from ..conftest import make_judged_study

CSV_NAMES = ["judgments.csv", "results.csv", "bradleyterry2.csv", "demographics.csv"]


def whole_file(columns, rows):
    """How every CSV was written before streaming: all rows into one buffer, then the text."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in list(rows):
        writer.writerow({key: csv_cell(row.get(key)) for key in columns})
    return out.getvalue()


@pytest.fixture
def judged(db):
    study = make_judged_study(participants=12, seed=5)
    refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters={"bootstrap": 20, "split_halves": 4})
    return study


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


@pytest.mark.parametrize("name", CSV_NAMES)
def test_every_csv_export_streams_the_same_text_from_the_dashboard_and_the_api(client, api, judged, name):
    columns, rows = exports.CSV_EXPORTS[name]
    before = whole_file(columns, rows(judged, AnalysisRun.objects.latest_for(judged)))
    for response in (
        client.get(f"/dashboard/{judged.slug}/exports/{name}"),
        api.get(f"/api/studies/{judged.slug}/exports/{name}", HTTP_ACCEPT="text/csv"),
    ):
        assert response.status_code == 200
        assert response.streaming
        assert response["Content-Disposition"] == f'attachment; filename="{judged.slug}-{name}"'
        assert response.getvalue().decode() == before
    assert len(before.splitlines()) > 1


def test_the_small_exports_still_come_whole(client, researcher, judged):
    for name in ("results.json", "bradleyterry2.R"):
        response = client.get(f"/dashboard/{judged.slug}/exports/{name}")
        assert response.status_code == 200
        assert not response.streaming


def open_cursors() -> int:
    """Named cursors open on this connection (the unnamed portal of this very query, with server-side binding, is not one)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_cursors WHERE name <> ''")
        return cursor.fetchone()[0]


@pytest.mark.postgres
@pytest.mark.parametrize("name", ["judgments.csv", "bradleyterry2.csv"])
def test_on_postgresql_a_streamed_export_reads_through_a_server_side_cursor(
    client, researcher, judged, name, monkeypatch
):
    """Half-way through the download a named cursor is open: the rest of the rows are still in the database."""
    monkeypatch.setattr(rscript, "CHUNK_ROWS", 5)
    monkeypatch.setattr(exports, "CHUNK_ROWS", 5)
    assert open_cursors() == 0
    response = client.get(f"/dashboard/{judged.slug}/exports/{name}")
    lines = iter(response.streaming_content)
    first = [next(lines) for _ in range(2)]  # the header and the first row
    assert open_cursors() == 1
    rest = list(lines)
    assert open_cursors() == 0
    assert len(first) + len(rest) > 6  # more rows than one chunk
