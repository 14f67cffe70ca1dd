"""Migration 0034: studies that went live before snapshots existed (0031) are shown from one, as going live now does."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from surveys.models import Study, StudySnapshot, Vignette
from surveys.models.freeze import freeze_lifted
from surveys.services.lifecycle import close_study, go_live
from tests.conftest import make_study
from tests.surveys.test_judging_flow import csrf_client, through_demographics
from tests.surveys.test_snapshots import vignette_shown

BEFORE = ("surveys", "0033_bonus_constraint_messages")
AFTER = ("surveys", "0034_snapshots_of_earlier_live_studies")


def migrate(*targets) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(list(targets) or executor.loader.graph.leaf_nodes())


@pytest.fixture
def before_snapshots():
    """The database as it was before 0034 ran; fully migrated again afterwards, whatever the test did."""
    migrate(BEFORE)
    try:
        yield
    finally:
        migrate()


def went_live_before_snapshots(slug: str, *, closed: bool = False) -> tuple[Study, dict]:
    """A study live (or closed) without a snapshot, as one that went live before 0031; and what going live writes now."""
    study = go_live(study=make_study(slug=slug, vignettes=2, vignettes_per_participant=1, minimum_seconds=0))
    if closed:
        study = close_study(study=study)
    written = StudySnapshot.objects.get(pk=study.snapshot_id).content
    Study.objects.filter(pk=study.pk).update(snapshot=None)
    StudySnapshot.objects.filter(study=study).delete()
    return study, written


@pytest.mark.django_db(transaction=True)
def test_every_study_past_draft_without_a_snapshot_gets_the_one_going_live_writes(before_snapshots):
    live, live_content = went_live_before_snapshots("old-live")
    closed, closed_content = went_live_before_snapshots("old-closed", closed=True)
    draft = make_study(slug="draft")
    recent = go_live(study=make_study(slug="recent", vignettes=1, vignettes_per_participant=1))

    migrate(AFTER)

    live.refresh_from_db()
    closed.refresh_from_db()
    assert StudySnapshot.objects.get(pk=live.snapshot_id).content == live_content
    assert StudySnapshot.objects.get(pk=closed.snapshot_id).content == closed_content
    assert Study.objects.get(pk=draft.pk).snapshot_id is None  # a draft is shown from its rows until it goes live
    assert Study.objects.get(pk=recent.pk).snapshot_id == recent.snapshot_id  # kept, not written again
    assert StudySnapshot.objects.count() == 3

    migrate(BEFORE)  # back (the snapshots stay: participants were shown them) and forward: nothing more written
    migrate(AFTER)
    assert StudySnapshot.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_after_the_migration_judges_see_the_snapshot_not_a_later_change_to_the_rows(before_snapshots):
    study, _ = went_live_before_snapshots("old-live")
    migrate(AFTER)
    study.refresh_from_db()
    client = csrf_client()
    url = through_demographics(client, study).url
    shown = vignette_shown(client, url)

    with freeze_lifted():  # a data fix not yet followed by replace_snapshot
        Vignette.objects.filter(study=study).update(text="Changed without a new snapshot.")

    assert vignette_shown(client, url) == shown != "Changed without a new snapshot."
