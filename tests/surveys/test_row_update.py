"""save_fields: a participant's lifecycle fields stored as `save(update_fields=…)` stores them, and only them."""

import pytest
from django.db import DatabaseError
from django.db.models.signals import post_save

from surveys.models import Participant
from surveys.services.row_update import save_fields
from tests.conftest import make_study


@pytest.mark.django_db
def test_only_the_fields_named_are_stored_with_their_values_as_the_orm_stores_them():
    participant = Participant.objects.create(study=make_study(), prolific_pid="p1")
    participant.status = Participant.Status.COMPLETED
    participant.flags = [{"code": "too-fast", "reason": "judged in 10 s"}]
    participant.first_position_share = None
    participant.prolific_pid = "changed-but-not-named"
    save_fields(participant, ["status", "flags", "first_position_share", "status"])
    stored = Participant.objects.get(pk=participant.pk)
    assert stored.status == Participant.Status.COMPLETED
    assert stored.flags == [{"code": "too-fast", "reason": "judged in 10 s"}]
    assert stored.first_position_share is None
    assert stored.prolific_pid == "p1"


@pytest.mark.django_db
def test_a_row_gone_is_an_error_as_with_the_orms_save():
    participant = Participant.objects.create(study=make_study(), prolific_pid="p1")
    Participant.objects.filter(pk=participant.pk).delete()
    with pytest.raises(DatabaseError):
        save_fields(participant, ["status"])


@pytest.mark.django_db
def test_save_signals_still_hear_of_the_save():
    participant = Participant.objects.create(study=make_study(), prolific_pid="p1")
    heard = []

    def listen(sender, instance, update_fields, **kwargs):
        heard.append(set(update_fields))

    post_save.connect(listen, sender=Participant, weak=False, dispatch_uid="test-row-update")
    try:
        participant.status = Participant.Status.CONSENTED
        save_fields(participant, ["status"])
    finally:
        post_save.disconnect(sender=Participant, dispatch_uid="test-row-update")
    assert heard == [{"status"}]
    assert Participant.objects.get(pk=participant.pk).status == Participant.Status.CONSENTED
