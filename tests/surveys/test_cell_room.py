"""A cell's room is one rule (issue 33): the ORM's filter and the allocation's statements read the same cells."""

import pytest
from django.db import connection

from surveys.models import Cell
from surveys.models.judging import cell_room_sql
from surveys.prolific.drafts.places import open_places
from surveys.services.allocation import has_room
from surveys.services.lifecycle import go_live
from tests.conftest import make_study


@pytest.mark.django_db
def test_the_orm_and_the_sql_agree_on_which_cells_have_room_and_every_reader_follows():
    study = go_live(study=make_study(vignettes=2, vignettes_per_participant=2, repetitions=2))
    cells = list(Cell.objects.filter(study=study).order_by("pk"))
    # Full by completion, full by reservation, one place left, untouched.
    for cell, (completed, reserved) in zip(cells, [(2, 0), (0, 2), (1, 0), (0, 0)], strict=False):
        Cell.objects.filter(pk=cell.pk).update(completed=completed, reserved=reserved)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {Cell._meta.db_table} WHERE {cell_room_sql(connection)} ORDER BY id")
        by_sql = [row[0] for row in cursor.fetchall()]
    by_orm = list(Cell.objects.with_room().order_by("pk").values_list("pk", flat=True))
    assert by_sql == by_orm == [cell.pk for cell in cells[2:]]

    Cell.objects.filter(study=study, vignette__key="v2").update(completed=2, reserved=0)
    assert not has_room(study=study)  # only one vignette left with room, two pages wanted
    assert open_places(study)[1] == 1
