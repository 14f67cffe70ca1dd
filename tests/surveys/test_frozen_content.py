"""Live means frozen below the admin (issue 33): a live study's shown content refuses every writer."""

import pytest

from surveys.models import Answer, Feature, Question, Vignette
from surveys.models.freeze import StudyFrozen, freeze_lifted
from surveys.services.lifecycle import go_live
from tests.conftest import make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def live():
    study = make_study()
    return go_live(study=study)


def test_a_live_studys_questions_and_vignettes_refuse_save_delete_and_bulk_writes(live):
    question, vignette = live.questions.first(), live.vignettes.first()
    question.text = "Changed under the judges?"
    with pytest.raises(StudyFrozen, match="has gone live: what its judges see is frozen"):
        question.save()
    with pytest.raises(StudyFrozen):
        vignette.delete()
    with pytest.raises(StudyFrozen):
        Vignette.objects.filter(study=live).update(text="Changed.")
    with pytest.raises(StudyFrozen):
        Question.objects.create(study=live, key="extra", text="One more?")
    with pytest.raises(StudyFrozen):
        Question.objects.filter(study=live).delete()
    assert live.questions.count() == 5
    assert not Vignette.objects.filter(text="Changed.").exists()


def test_a_live_studys_selected_answers_and_their_features_are_frozen_but_not_how_they_were_written(live):
    answer = Answer.objects.for_study(live).selected().first()
    answer.action = "Something else entirely."
    with pytest.raises(StudyFrozen, match="The answer"):
        answer.save()
    with pytest.raises(StudyFrozen):
        Answer.objects.filter(pk=answer.pk).update(selected=False)
    with pytest.raises(StudyFrozen):
        answer.features.all().delete()
    with pytest.raises(StudyFrozen):
        Feature.objects.bulk_create([Feature(answer=answer, position=3, feature="extra", weight=0)])
    feature = answer.features.first()
    feature.reason = "another reason"
    with pytest.raises(StudyFrozen):
        feature.save()
    answer.refresh_from_db()
    answer.authenticity = Answer.Authenticity.HIGH  # not shown to judges: the rating may be recomputed
    answer.save(update_fields=["authenticity"])
    assert Answer.objects.get(pk=answer.pk).action != "Something else entirely."
    assert answer.features.count() == 2


def test_unselected_answers_of_a_live_study_may_still_be_written_and_a_draft_is_free(live):
    answer = Answer.objects.for_study(live).selected().first()
    other = Answer.objects.create(system=answer.system, vignette=answer.vignette, sample=2, action="Another.")
    Feature.objects.create(answer=other, position=1, feature="care", weight=100)
    other.delete()
    draft = make_study(slug="draft")
    draft.questions.update(text="Still a draft.")
    Feature.objects.filter(answer__vignette__study=draft).delete()


def test_a_data_fix_lifts_the_freeze_only_inside_its_block(live):
    vignette = live.vignettes.first()
    vignette.text = "A typo fixed."
    with freeze_lifted():
        vignette.save()
    assert Vignette.objects.get(pk=vignette.pk).text == "A typo fixed."
    with pytest.raises(StudyFrozen):
        vignette.save()
