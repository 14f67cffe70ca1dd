"""A participant written by the composed INSERT or UPDATE is the row and object the ORM would give."""

import pytest
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models.signals import post_save

from surveys.models import Participant
from surveys.services.participant_writes import create_participant, save_fields
from tests.surveys.test_judge_reads import values
from tests.surveys.test_judging_flow import live_study


@pytest.mark.django_db
def test_the_composed_insert_stores_what_the_orm_would_and_refuses_a_second_open_session():
    study = live_study()
    made = create_participant(study=study, prolific_pid="a" * 24, prolific_study_id="", session_id="b" * 24)
    orm = Participant.objects.create(study=study, prolific_pid="c" * 24, session_id="d" * 24)

    stored = Participant.objects.get(pk=made.pk)
    assert values(made) == values(stored)
    assert made._state.adding is False
    assert isinstance(stored.flags, list)
    assert isinstance(stored.demographics, dict)
    same_defaults = {"id", "prolific_pid", "session_id", "started_at"}
    assert {k: v for k, v in values(stored).items() if k not in same_defaults} == {
        k: v for k, v in values(orm).items() if k not in same_defaults
    }
    with pytest.raises(IntegrityError), transaction.atomic():
        create_participant(study=study, prolific_pid="a" * 24, session_id="e" * 24)


@pytest.mark.django_db
def test_a_listener_to_a_participants_save_still_hears_it():
    study = live_study()
    heard = []

    def listen(sender, instance, created, **kwargs):
        heard.append((instance.prolific_pid, created))

    post_save.connect(listen, sender=Participant, weak=False, dispatch_uid="test-listen")
    try:
        create_participant(study=study, prolific_pid="a" * 24, session_id="b" * 24)
    finally:
        post_save.disconnect(sender=Participant, dispatch_uid="test-listen")
    assert heard == [("a" * 24, True)]


@pytest.mark.django_db
def test_the_composed_update_stores_the_fields_named_and_only_those():
    study = live_study()
    participant = create_participant(study=study, prolific_pid="a" * 24, session_id="b" * 24)
    participant.demographics = {"age": "30-39"}
    participant.flags = [{"code": "too-fast", "reason": "fast"}]
    participant.status = Participant.Status.CONSENTED
    participant.seconds_total = 12.5
    save_fields(participant, ["demographics", "flags", "status"])

    stored = Participant.objects.get(pk=participant.pk)
    assert (stored.demographics, stored.flags, stored.status) == (
        {"age": "30-39"},
        [{"code": "too-fast", "reason": "fast"}],
        Participant.Status.CONSENTED,
    )
    assert stored.seconds_total == 0  # not named: not written
    Participant.objects.filter(pk=participant.pk).delete()
    with pytest.raises(DatabaseError):
        save_fields(participant, ["status"])
