"""The database holds the domain's invariants, on SQLite and on PostgreSQL alike."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from surveys.models import Answer, Assignment, Cell, Feature, Judgment, Participant, Question
from surveys.services.answer_records import create_answer
from surveys.services.answer_shape import FeatureIn
from surveys.services.lifecycle import go_live

from ..conftest import make_study


def integrity_error(write) -> bool:
    try:
        with transaction.atomic():
            write()
    except IntegrityError:
        return True
    return False


@pytest.mark.django_db
def test_only_one_answer_per_system_and_vignette_can_be_selected(study):
    answer = Answer.objects.filter(selected=True).first()
    second = Answer.objects.create(system=answer.system, vignette=answer.vignette, sample=2)
    assert integrity_error(lambda: Answer.objects.filter(pk=second.pk).update(selected=True))


@pytest.mark.django_db
def test_an_answer_keeps_at_most_five_features_with_weights_from_0_to_100(study):
    answer = Answer.objects.first()
    assert integrity_error(lambda: Feature.objects.create(answer=answer, position=6, feature="x", weight=0))
    assert integrity_error(lambda: Feature.objects.create(answer=answer, position=1, feature="dup", weight=0))
    assert integrity_error(lambda: Feature.objects.filter(answer=answer, position=1).update(weight=101))


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
def test_postgresql_refuses_at_commit_an_answer_whose_weights_do_not_sum_to_100():
    assert connection.vendor == "postgresql"
    make_study(slug="pg")
    answer = Answer.objects.first()
    with pytest.raises(IntegrityError, match="sum to 90, not 100"), transaction.atomic():
        Feature.objects.filter(answer=answer, position=1).update(weight=50)
    # The deferred check lets a transaction move weight between features, as long as it ends at 100.
    with transaction.atomic():
        Feature.objects.filter(answer=answer, position=1).update(weight=70)
        Feature.objects.filter(answer=answer, position=2).update(weight=30)
    assert sorted(answer.features.values_list("weight", flat=True)) == [30, 70]


@pytest.mark.django_db
def test_the_services_refuse_weights_that_do_not_sum_to_100(study):
    system, vignette = study.systems.first(), study.vignettes.first()
    with pytest.raises(ValidationError, match="weights sum to 90, not 100"):
        create_answer(system=system, vignette=vignette, features=[FeatureIn(feature="a", weight=90)], action="act")
    with pytest.raises(ValidationError, match="at most 5 features"):
        create_answer(system=system, vignette=vignette, features=[FeatureIn(feature="a", weight=20)] * 6, action="act")


@pytest.mark.django_db
def test_a_cell_can_never_hold_more_than_its_target(study):
    go_live(study=study)
    cell = Cell.objects.first()
    Cell.objects.filter(pk=cell.pk).update(reserved=cell.target)
    assert integrity_error(lambda: Cell.objects.filter(pk=cell.pk).update(completed=1))
    # A conditional reservation on a full cell simply updates nothing.
    from django.db.models import F

    assert (
        Cell.objects.filter(pk=cell.pk, completed__lt=F("target") - F("reserved")).update(reserved=F("reserved") + 1)
        == 0
    )


@pytest.mark.django_db
def test_one_participant_per_study_and_prolific_person_and_one_judgment_per_question(study):
    go_live(study=study)
    Participant.objects.create(study=study, prolific_pid="a" * 24, session_id="s1")
    assert integrity_error(lambda: Participant.objects.create(study=study, prolific_pid="a" * 24, session_id="s2"))
    participant = Participant.objects.get()
    cell = Cell.objects.select_related("answer_a", "answer_b").first()
    assignment = Assignment.objects.create(
        participant=participant,
        cell=cell,
        vignette=cell.vignette,
        first_answer=cell.answer_a,
        second_answer=cell.answer_b,
        position=1,
        expires_at=timezone.now(),
    )
    question = Question.objects.filter(study=study).first()
    Judgment.objects.create(
        assignment=assignment, question=question, winner=cell.answer_a, loser=cell.answer_b, winner_position="first"
    )
    assert integrity_error(
        lambda: Judgment.objects.create(
            assignment=assignment,
            question=question,
            winner=cell.answer_b,
            loser=cell.answer_a,
            winner_position="second",
        )
    )
