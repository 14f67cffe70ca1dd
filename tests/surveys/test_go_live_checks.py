"""Going live checks what judges will be shown (issue 33): features present, low authenticity confirmed."""

import pytest
from django.core.exceptions import ValidationError

from surveys.models import Answer, Study
from surveys.services.answer_records import select_answer
from surveys.services.lifecycle import go_live, missing_for_live
from surveys.services.study_files import export_study, import_study
from surveys.services.study_files.reading import StudyFileError
from tests.conftest import make_study

pytestmark = pytest.mark.django_db


def _answer(study: Study, system: str = "beta", vignette: str = "v2") -> Answer:
    return Answer.objects.get(vignette__study=study, system__key=system, vignette__key=vignette)


def test_a_selected_answer_without_features_stops_going_live_instead_of_breaking_its_pages():
    study = make_study()
    _answer(study).features.all().delete()
    with pytest.raises(ValidationError, match="the answer of system 'beta' on vignette 'v2' has no features"):
        go_live(study=study)
    assert Study.objects.get(pk=study.pk).status == Study.Status.DRAFT


def test_a_lone_low_authenticity_answer_is_not_selected_on_going_live_until_someone_confirms_it(admin_user):
    study = make_study(selected=False)
    low = _answer(study)
    low.authenticity = Answer.Authenticity.LOW
    low.save()
    problems = " ".join(missing_for_live(study))
    assert "system 'beta' on vignette 'v2' is rated low authenticity and nobody confirmed selecting it" in problems
    with pytest.raises(ValidationError, match="nobody confirmed selecting it"):
        go_live(study=study)
    assert not Answer.objects.filter(vignette__study=study, selected=True).exists()  # nothing selected on refusal
    select_answer(answer=low, user=admin_user, confirm_low_authenticity=True)
    study = go_live(study=study)
    low.refresh_from_db()
    assert low.selected
    assert low.low_authenticity_confirmed_by == admin_user


def test_a_low_authenticity_answer_selected_around_the_service_is_still_caught_on_going_live():
    study = make_study()
    Answer.objects.filter(pk=_answer(study).pk).update(authenticity=Answer.Authenticity.LOW)
    with pytest.raises(ValidationError, match="rated low authenticity and nobody confirmed"):
        go_live(study=study)


def test_the_study_file_keeps_the_confirmation_and_refuses_a_selected_low_answer_without_one(admin_user):
    study = make_study(selected=False)
    low = _answer(study)
    low.authenticity = Answer.Authenticity.LOW
    low.save()
    select_answer(answer=low, user=admin_user, confirm_low_authenticity=True)
    exported = export_study(study)
    entry = next(a for a in exported["answers"] if a["system"] == "beta" and a["vignette"] == "v2")
    assert entry["authenticity"]["confirmed_by"] == admin_user.get_username()
    assert entry["authenticity"]["confirmed_at"]

    copy = import_study(dict(exported, slug="copy", status="live"))
    copied = _answer(copy)
    assert copied.selected
    assert copied.low_authenticity_confirmed_by == admin_user
    assert copied.low_authenticity_confirmed_at == low.low_authenticity_confirmed_at
    assert entry in export_study(copy)["answers"]

    del entry["authenticity"]["confirmed_at"], entry["authenticity"]["confirmed_by"]
    with pytest.raises(StudyFileError) as caught:
        import_study(dict(exported, slug="copy2"))
    index = exported["answers"].index(entry)
    assert f"answers[{index}]" in " ".join(caught.value.errors)
    assert "rated low authenticity without a confirmation" in " ".join(caught.value.errors)
    assert not Study.objects.filter(slug="copy2").exists()
