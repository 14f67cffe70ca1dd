from html.parser import HTMLParser

import pytest
from django.urls import reverse

from surveys.models import Answer, Study
from surveys.services.answer_records import create_answer
from surveys.services.answer_shape import FeatureIn
from surveys.services.lifecycle import go_live


@pytest.mark.django_db
def test_admin_pages_require_a_login(client, study):
    for url in [
        reverse("admin:surveys_study_changelist"),
        reverse("admin:surveys_study_answers", args=[study.pk]),
        reverse("admin:surveys_study_change", args=[study.pk]),
    ]:
        response = client.get(url)
        assert response.status_code == 302
        assert "/admin/login/" in response["Location"]


@pytest.mark.django_db
def test_going_live_is_refused_with_a_message_listing_exactly_what_is_missing(client, researcher, study):
    # Two answers and neither selected: a choice only the researcher can make (a lone one is selected on going live).
    missing = Answer.objects.get(system__key="beta", vignette__key="v2")
    missing.selected = False
    missing.save()
    Answer.objects.create(system=missing.system, vignette=missing.vignette, sample=2)
    study.reference_system = None
    study.save()
    response = client.post(
        reverse("admin:surveys_study_changelist"),
        {"action": "make_live", "_selected_action": [study.pk]},
        follow=True,
    )
    text = response.content.decode()
    assert "no selected answer for system &#x27;beta&#x27; on vignette &#x27;v2&#x27;" in text
    assert "no reference system is set" in text
    study.refresh_from_db()
    assert study.status == Study.Status.DRAFT


@pytest.mark.django_db
def test_a_study_moves_draft_to_live_to_closed_in_the_admin(client, researcher, study):
    changelist = reverse("admin:surveys_study_changelist")
    client.post(changelist, {"action": "make_live", "_selected_action": [study.pk]}, follow=True)
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE
    assert study.cells.count() == 9
    client.post(changelist, {"action": "make_closed", "_selected_action": [study.pk]}, follow=True)
    study.refresh_from_db()
    assert study.status == Study.Status.CLOSED


@pytest.mark.django_db
def test_answers_appear_side_by_side_and_selecting_one_records_who_and_when(client, researcher, study):
    system, vignette = study.systems.get(key="gamma"), study.vignettes.get(key="v1")
    candidate = create_answer(
        system=system,
        vignette=vignette,
        features=[FeatureIn(feature="<script>alert(1)</script>", weight=100, reason="markup is shown as text")],
        action="Another take",
    )
    page = client.get(reverse("admin:surveys_study_answers", args=[study.pk])).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in page
    assert page.count("Select this answer") == 1  # only the unselected candidate offers it
    client.post(reverse("admin:surveys_study_select_answer", args=[study.pk, candidate.pk]))
    candidate.refresh_from_db()
    assert candidate.selected
    assert candidate.selected_by == researcher
    assert candidate.selected_at is not None
    assert Answer.objects.filter(system=system, vignette=vignette, selected=True).count() == 1


@pytest.mark.django_db
def test_selection_is_fixed_once_a_study_is_live(client, researcher, study):
    from surveys.services.lifecycle import go_live

    go_live(study=study)
    other = Answer.objects.create(system=study.systems.first(), vignette=study.vignettes.first(), sample=2)
    response = client.post(reverse("admin:surveys_study_select_answer", args=[study.pk, other.pk]), follow=True)
    assert "cannot change once it has gone live" in response.content.decode()
    other.refresh_from_db()
    assert not other.selected


@pytest.mark.django_db
def test_a_system_missing_several_answers_is_one_line_of_the_refusal(client, researcher, study):
    Answer.objects.filter(system__key="beta").delete()  # no answer yet to any vignette
    response = client.post(
        reverse("admin:surveys_study_changelist"),
        {"action": "make_live", "_selected_action": [study.pk]},
        follow=True,
    )
    text = response.content.decode()
    assert "system &#x27;beta&#x27; on 3 of 3 vignettes: &#x27;v1&#x27;, &#x27;v2&#x27;, &#x27;v3&#x27;" in text
    assert text.count("no selected answer") == 1


@pytest.mark.django_db
def test_a_study_without_a_completion_code_is_flagged_before_and_on_going_live(client, researcher, study):
    page = client.get(reverse("admin:surveys_study_change", args=[study.pk])).content.decode()
    assert "Yes. Note: no completion code is set" in page
    Study.objects.filter(pk=study.pk).update(completion_code="C0DE")
    page = client.get(reverse("admin:surveys_study_change", args=[study.pk])).content.decode()
    assert "no completion code" not in page
    Study.objects.filter(pk=study.pk).update(completion_code="")
    response = client.post(
        reverse("admin:surveys_study_changelist"),
        {"action": "make_live", "_selected_action": [study.pk]},
        follow=True,
    )
    text = response.content.decode()
    assert "Study &#x27;s1&#x27; is live." in text
    assert "no completion code is set" in text


class _FormFields(HTMLParser):
    """Every named input, textarea and select of a page with its current value, as a browser would send it."""

    def __init__(self):
        super().__init__()
        self.data, self._textarea, self._select = {}, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "input" and a.get("name") and a.get("type") not in ("submit", "checkbox", "file"):
            self.data[a["name"]] = a.get("value") or ""
        elif tag == "input" and a.get("type") == "checkbox" and "checked" in a:
            self.data[a["name"]] = "on"
        elif tag == "textarea":
            self._textarea = a["name"]
            self.data[self._textarea] = ""
        elif tag == "select":
            self._select = a["name"]
            self.data.setdefault(self._select, "")
        elif tag == "option" and self._select and "selected" in a:
            self.data[self._select] = a.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data):
        if self._textarea:
            self.data[self._textarea] += data.removeprefix("\n") if not self.data[self._textarea] else data


@pytest.mark.django_db
def test_the_systems_inline_is_compact_and_still_saves_parameters(client, researcher, study):
    url = reverse("admin:surveys_study_change", args=[study.pk])
    page = client.get(url).content.decode()
    assert 'name="systems-0-key" value="alpha" size="12"' in page
    assert '<textarea name="systems-0-parameters" cols="16" rows="2"' in page
    fields = _FormFields()
    fields.feed(page)
    data = {name: value for name, value in fields.data.items() if name != "csrfmiddlewaretoken"}
    data["systems-0-parameters"] = '{"temperature": 0.7}'
    data["systems-0-base_url"] = "llm.example.org/v1"
    data["_continue"] = "Save"
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    alpha = study.systems.get(key="alpha")
    assert alpha.parameters == {"temperature": 0.7}
    assert alpha.base_url == "https://llm.example.org/v1"  # a bare host is taken as https, not http


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "saved"),
    [('["Quickly", "Carefully"]', ["Quickly", "Carefully"]), ("[]", []), ('["Only one"]', None), ('{"a": 1}', None)],
)
def test_attention_options_are_two_texts_or_empty(client, researcher, study, options, saved):
    url = reverse("admin:surveys_study_change", args=[study.pk])
    fields = _FormFields()
    fields.feed(client.get(url).content.decode())
    data = {name: value for name, value in fields.data.items() if name != "csrfmiddlewaretoken"}
    data["attention_options"] = options
    response = client.post(url, data)
    study.refresh_from_db()
    if saved is None:
        assert response.status_code == 200
        assert "Give exactly two options" in response.content.decode()
        assert study.attention_options == []
    else:
        assert response.status_code == 302
        assert study.attention_options == saved


def _answer_form(client, answer):
    url = reverse("admin:surveys_answer_change", args=[answer.pk])
    fields = _FormFields()
    fields.feed(client.get(url).content.decode())
    return url, {name: value for name, value in fields.data.items() if name != "csrfmiddlewaretoken"}


@pytest.mark.django_db
def test_editing_an_answer_to_weights_that_do_not_add_up_is_an_error_on_the_page(client, researcher, study):
    answer = Answer.objects.filter(vignette__study=study).first()
    url, data = _answer_form(client, answer)
    data["features-0-weight"] = "10"
    data["_save"] = "Save"
    response = client.post(url, data)
    assert response.status_code == 200  # the form again, not a server error
    before = list(answer.features.values_list("weight", flat=True))
    total = 10 + sum(before[1:])
    assert f"Weights sum to {total}, not 100." in response.content.decode()
    assert list(answer.features.values_list("weight", flat=True)) == before


@pytest.mark.django_db
def test_answers_of_a_live_study_cannot_be_edited_in_the_admin(client, researcher, study):
    go_live(study=study)
    answer = Answer.objects.filter(vignette__study=study).first()
    url, data = _answer_form(client, answer)
    assert 'name="action"' not in client.get(url).content.decode()  # shown read-only
    data.update({"action": "Something judges never saw.", "_save": "Save"})
    assert client.post(url, data).status_code == 403
    answer.refresh_from_db()
    assert answer.action != "Something judges never saw."


@pytest.mark.django_db
def test_cells_and_judgments_are_shown_read_only(client, researcher, study):
    go_live(study=study)
    cell = study.cells.first()
    page = client.get(reverse("admin:surveys_cell_change", args=[cell.pk])).content.decode()
    assert 'name="completed"' not in page
    assert 'name="answer_a"' not in page
    response = client.post(reverse("admin:surveys_cell_change", args=[cell.pk]), {"completed": 0, "target": 99})
    assert response.status_code == 403
    assert client.get(reverse("admin:surveys_judgment_add")).status_code == 403
