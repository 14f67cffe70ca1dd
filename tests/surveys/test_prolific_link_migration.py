"""Migration 0028: of studies that shared a Prolific study id (issue 35: an outsider typed a victim's STUDY_ID into
their own draft), the earliest created keeps it and every other is unlinked, with an audit event saying so; the
unique constraint of 0029 then holds."""

from datetime import UTC, datetime

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor

BEFORE = ("surveys", "0027_bonus_payment")
AFTER = ("surveys", "0028_study_prolific_link")
UNIQUE = ("surveys", "0029_study_prolific_study_once")


def migrate(*targets):
    """Migrate to `targets` (none: fully) and return the historical apps there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    nodes = list(targets) or executor.loader.graph.leaf_nodes()
    executor.migrate(nodes)
    executor.loader.build_graph()
    return executor.loader.project_state(nodes).apps


@pytest.mark.django_db(transaction=True)
def test_the_earliest_study_keeps_a_shared_prolific_study_and_the_others_are_unlinked_and_audited():
    try:
        old = migrate(BEFORE)
        Study = old.get_model("surveys", "Study")

        def study(slug: str, prolific_id: str, day: int):
            return Study.objects.create(slug=slug, name=slug, prolific_study_id=prolific_id,
                                        prolific_status="ACTIVE" if prolific_id else "",
                                        created_at=datetime(2026, 11, day, tzinfo=UTC)).pk  # fmt: skip

        copy = study("outsiders-copy", "st-victim", 20)  # made first (a lower pk), but created later
        victim = study("victim", "st-victim", 10)
        third = study("third", "st-victim", 25)
        alone, none = study("alone", "st-other", 21), study("no-prolific", "", 22)

        new = migrate(AFTER)
        rows = {s.pk: s for s in new.get_model("surveys", "Study").objects.all()}
        assert (rows[victim].prolific_study_id, rows[victim].prolific_link) == ("st-victim", "earlier")
        assert (rows[alone].prolific_study_id, rows[alone].prolific_link) == ("st-other", "earlier")
        for unlinked in (copy, third):
            assert (rows[unlinked].prolific_study_id, rows[unlinked].prolific_link) == ("", "")
            assert rows[unlinked].prolific_status == ""  # no longer shows the victim's status as its own
        assert (rows[none].prolific_study_id, rows[none].prolific_link) == ("", "")
        events = new.get_model("surveys", "AuditEvent").objects.filter(action="prolific_linked")
        assert sorted(e.study_id for e in events) == sorted([copy, third])
        event = events.get(study_id=copy)
        assert (event.study_slug, event.details["before"], event.details["after"]) == (
            "outsiders-copy",
            "st-victim",
            "",
        )
        assert "Unlinked by migration 0028" in event.details["note"]

        unique = migrate(UNIQUE)  # the constraint now holds, and refuses a second copy
        with pytest.raises(IntegrityError), transaction.atomic():
            unique.get_model("surveys", "Study").objects.filter(pk=copy).update(prolific_study_id="st-victim")
    finally:
        migrate()
