"""Live means frozen (issue 9, item 6): a live study's parts and design cannot change under its judges."""

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from surveys.models import Answer, Question, Study, System, Vignette
from surveys.services.freezing import FROZEN_STUDY_FIELDS, StudyFrozen, check_editable, copy_as_draft
from surveys.services.lifecycle import go_live
from surveys.services.study_files import export_study, import_study
from surveys.services.study_files.reading import StudyFileError
from tests.surveys.test_admin import _FormFields


def _study_form(client, study) -> tuple[str, dict]:
    url = reverse("admin:surveys_study_change", args=[study.pk])
    fields = _FormFields()
    fields.feed(client.get(url).content.decode())
    return url, {name: value for name, value in fields.data.items() if name != "csrfmiddlewaretoken"}


def _snapshot(study: Study) -> tuple:
    study.refresh_from_db()
    return (
        [getattr(study, name) for name in FROZEN_STUDY_FIELDS if name != "reference_system"],
        study.reference_system_id,
        list(Question.objects.filter(study=study).values_list("key", "text", "position")),
        list(Vignette.objects.filter(study=study).values_list("key", "character", "text", "position")),
        list(System.objects.filter(study=study).values_list("key", "label", "kind")),
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    "edit",
    [
        {"repetitions": "3"},
        {"vignettes_per_participant": "1"},
        {"order_rule": "balanced-per-cell"},
        {"reservation_minutes": "5"},
        {"questions-0-text": "A different question?"},
        {"vignettes-0-text": "A different story."},
        {"systems-0-label": "Renamed"},
        {"questions-0-DELETE": "on"},
    ],
    ids=lambda edit: next(iter(edit)),
)
def test_a_page_opened_while_draft_cannot_change_the_study_once_it_is_live(client, researcher, study, edit):
    url, data = _study_form(client, study)  # the researcher opened the page while it was a draft
    go_live(study=study)
    before = _snapshot(study)
    data.update(edit)
    data["_save"] = "Save"
    response = client.post(url, data, follow=True)
    page = response.content.decode()
    assert "is live: its questions, vignettes, systems, answers, design and instrument are frozen" in page
    assert "Refused:" in page
    assert _snapshot(study) == before


@pytest.mark.django_db
def test_a_live_studys_page_shows_parts_and_design_read_only_and_says_why(client, researcher, study):
    go_live(study=study)
    url, data = _study_form(client, study)
    page = client.get(url).content.decode()
    assert "frozen, so that what judges see and how cells fill cannot shift under them" in page
    for name in ["repetitions", "vignettes_per_participant", "order_rule", "reservation_minutes", "user_prompt"]:
        assert name not in data
    assert not any(name.endswith("-text") or name.endswith("-label") for name in data)
    assert "questions-0-DELETE" not in data
    assert data["questions-MAX_NUM_FORMS"] == "0"


@pytest.mark.django_db
def test_prolific_codes_and_description_stay_editable_and_each_change_is_recorded_old_to_new(client, researcher, study):
    go_live(study=study)
    before = _snapshot(study)
    url, data = _study_form(client, study)
    data.update({"completion_code": "NEWCODE", "description": "Now with a description.", "_save": "Save"})
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    study.refresh_from_db()
    assert study.completion_code == "NEWCODE"
    assert study.description == "Now with a description."
    assert _snapshot(study) == before
    entry = LogEntry.objects.get(object_id=str(study.pk), action_flag=2)
    assert entry.user == researcher
    assert entry.action_time is not None
    message = entry.get_change_message()
    assert "Completion code ('' → 'NEWCODE')" in message
    assert "Description ('' → 'Now with a description.')" in message


@pytest.mark.django_db
def test_the_service_check_refuses_frozen_fields_only_once_live(study):
    check_editable(study, ["repetitions", "questions"])  # a draft: anything goes
    study = go_live(study=study)
    check_editable(study, ["completion_code", "description", "name", "invalid_policy"])
    with pytest.raises(StudyFrozen, match="Refused: repetitions, vignettes"):
        check_editable(study, ["repetitions", "vignettes", "completion_code"])


@pytest.mark.django_db
def test_importing_a_live_studys_slug_is_refused_and_says_why(study):
    go_live(study=study)
    data = export_study(study)
    data["vignettes"][0]["text"] = "Changed under the judges."
    with pytest.raises(StudyFileError, match=r"frozen.*Only a draft study can be re-imported"):
        import_study(data)
    assert study.vignettes.get(key="v1").text == "Vignette 1 text."


@pytest.mark.django_db
def test_the_api_offers_no_way_to_write_a_study(client, researcher, study):
    go_live(study=study)
    url = reverse("analysis:api-study-detail", args=[study.slug])
    for method in (client.put, client.patch, client.delete):
        response = method(url, {"repetitions": 3}, content_type="application/json")
        assert response.status_code == 405
    assert Study.objects.get(pk=study.pk).repetitions == study.repetitions


@pytest.mark.django_db
def test_copy_as_a_new_draft_takes_everything_and_is_editable(client, researcher, study):
    go_live(study=study)
    response = client.post(
        reverse("admin:surveys_study_changelist"),
        {"action": "copy_as_new_draft", "_selected_action": [study.pk]},
        follow=True,
    )
    assert "copied as the draft" in response.content.decode()
    copy = Study.objects.get(slug="s1-copy")
    assert copy.status == Study.Status.DRAFT
    assert copy.name == "Study s1 (copy)"
    assert copy.repetitions == study.repetitions
    assert copy.reference_system.key == "alpha"
    assert copy.reference_system.study == copy
    assert list(copy.questions.values_list("key", "text")) == list(study.questions.values_list("key", "text"))
    assert list(copy.vignettes.values_list("key", "text")) == list(study.vignettes.values_list("key", "text"))
    assert list(copy.systems.values_list("key", "kind")) == list(study.systems.values_list("key", "kind"))
    copied = Answer.objects.for_study(copy).select_related("system", "vignette")
    assert copied.count() == Answer.objects.for_study(study).count() == 9
    assert all(a.system.study_id == copy.pk and a.selected and a.features.count() == 2 for a in copied)
    go_live(study=copy)  # the copy is complete: it can go live as it is
    assert copy_as_draft(study=study).slug == "s1-copy-2"
    # The copy is a draft: its page is editable again.
    _url, data = _study_form(client, Study.objects.get(slug="s1-copy-2"))
    assert "repetitions" in data
    assert "vignettes-0-text" in data
