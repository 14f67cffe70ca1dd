"""Issue 23.2: answers without clicking twelve times: add links, lone answers selected, CSV import."""

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client

from surveys.models import Answer, Study
from surveys.services.answer_files import AnswerFileError, import_answers
from surveys.services.lifecycle import go_live
from surveys.services.study_files import import_study, parse_study_file
from tests.conftest import make_study

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"


def doc_example_study() -> Study:
    block = (ROOT / "docs" / "study-files.md").read_text(encoding="utf-8").split("```json\n", 1)[1].split("```", 1)[0]
    return import_study(parse_study_file(block))


def researcher():
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("res", password="pw"))
    return client


def features_of(answer: Answer) -> list[tuple]:
    return list(answer.features.order_by("position").values_list("feature", "weight"))


@pytest.mark.parametrize("name", ["answers-one-row-per-feature.csv", "answers-one-row-per-answer.csv"])
def test_both_example_files_import_into_the_documented_example_study(name):
    study = doc_example_study()
    done = import_answers(study=study, text=(EXAMPLES / name).read_text(encoding="utf-8"))
    assert (done.created, done.updated) == (2, 0)
    gpt = Answer.objects.get(system__key="gpt-4o-mini", sample__gt=1)
    assert features_of(gpt) == [("Returning what was borrowed", 60), ("Honesty about the delay", 40)]
    assert gpt.action == "Noor should return the book, and explain the delay."
    assert gpt.origin == Answer.Origin.IMPORTED
    assert not gpt.selected  # the documented example keeps its selected sample 1


def test_a_second_import_replaces_the_same_answers_instead_of_adding_more():
    study = doc_example_study()
    text = (EXAMPLES / "answers-one-row-per-feature.csv").read_text(encoding="utf-8")
    import_answers(study=study, text=text)
    again = import_answers(study=study, text=text.replace(",70,", ",75,").replace(",30,", ",25,"))
    assert (again.created, again.updated) == (0, 2)
    assert features_of(Answer.objects.get(system__key="lay-human", sample=2)) == [
        ("Honesty", 75),
        ("Her money worries", 25),
    ]


def test_every_problem_is_named_by_row_and_column_and_nothing_is_written():
    study = doc_example_study()
    before = Answer.objects.count()
    text = (
        "system;vignette;feature;weight;reason\n"
        "gpt-4o-mini;overdue;Honesty;forty;x\n"
        "gpt-4o-mini;overdue;Harm;50;y\n"
        "lay-human;overdue;Duty;60;z\n"
        "lay-human;overdue;Care;30;z\n"
        "gpt4;overdue;Duty;100;z\n"
    )
    with pytest.raises(AnswerFileError) as caught:
        import_answers(study=study, text=text)
    errors = caught.value.errors
    assert "row 2, weight: must be a whole number, not 'forty'" in errors
    assert "rows 4–5 (system 'lay-human', vignette 'overdue'): weights sum to 90, not 100" in errors
    assert Answer.objects.count() == before
    with pytest.raises(AnswerFileError) as caught:
        import_answers(study=study, text="system,vignette,feature,weight\ngpt4,overdue,Duty,100\n")
    assert caught.value.errors == ["row 2, system: unknown system 'gpt4' (the study has: gpt-4o-mini, lay-human)"]
    with pytest.raises(AnswerFileError) as caught:
        import_answers(study=study, text="system,vignette,wieght\n")
    assert any(e.startswith("row 1: unknown column 'wieght'") for e in caught.value.errors)


def test_a_live_study_refuses_an_import():
    study = go_live(study=make_study())
    with pytest.raises(AnswerFileError, match="its answers are fixed"):
        import_answers(study=study, text="system,vignette,feature,weight\nalpha,v1,Duty,100\n")


def test_the_command_imports_and_reports_errors_with_their_place(tmp_path):
    study = doc_example_study()
    call_command("import_answers", study.slug, str(EXAMPLES / "answers-one-row-per-answer.csv"))
    assert Answer.objects.filter(sample=3).count() == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("system,vignette,feature_1,weight_1\nlay-human,overdue,Honesty,0\n", encoding="utf-8")
    with pytest.raises(CommandError, match="row 2, weight_1: 0 is outside 1–100"):
        call_command("import_answers", study.slug, str(bad))


def test_the_admin_upload_page_imports_a_sheet_and_shows_errors():
    study = doc_example_study()
    client = researcher()
    url = f"/admin/surveys/study/{study.pk}/answers/import/"
    with (EXAMPLES / "answers-one-row-per-feature.csv").open("rb") as sheet:
        response = client.post(url, {"file": sheet}, follow=True)
    assert "2 answers added, 0 updated" in response.content.decode()
    from django.core.files.uploadedfile import SimpleUploadedFile

    bad = SimpleUploadedFile("bad.csv", b"system,vignette,feature,weight\nlay-human,nowhere,Duty,100\n")
    page = client.post(url, {"file": bad}).content.decode()
    assert "Nothing was imported" in page
    assert "row 2, vignette: unknown vignette &#x27;nowhere&#x27;" in page


def test_an_empty_cell_on_the_answers_page_links_to_an_add_form_for_that_system_and_vignette():
    study = make_study(selected=False)
    answer = Answer.objects.get(system__key="beta", vignette__key="v2")
    answer.delete()
    client = researcher()
    page = client.get(f"/admin/surveys/study/{study.pk}/answers/").content.decode()
    beta, v2 = study.systems.get(key="beta"), study.vignettes.get(key="v2")
    add = f"/admin/surveys/answer/add/?study={study.pk}&amp;system={beta.pk}&amp;vignette={v2.pk}"
    assert add in page
    form = client.get(add.replace("&amp;", "&")).context["adminform"].form
    assert form.initial["system"] == str(beta.pk)
    other = make_study(slug="other")
    assert not form.fields["system"].queryset.filter(study=other).exists()
    assert set(form.fields["vignette"].queryset) == set(study.vignettes.all())


def test_going_live_selects_each_lone_answer_and_says_so():
    study = make_study(selected=False, completion_code="DONE")
    Answer.objects.create(system=study.systems.get(key="beta"), vignette=study.vignettes.get(key="v1"), sample=2)
    client = researcher()
    page = client.get(f"/admin/surveys/study/{study.pk}/change/").content.decode()
    assert "no selected answer for system &#x27;beta&#x27; on vignette &#x27;v1&#x27;" in page  # two to choose from
    assert "going live selects the only answer of 8 system × vignette" in page
    Answer.objects.filter(system__key="beta", vignette__key="v1", sample=2).delete()
    changelist = "/admin/surveys/study/"
    token = client.get(changelist).context["csrf_token"]
    response = client.post(
        changelist, {"action": "make_live", "_selected_action": [study.pk], "csrfmiddlewaretoken": token}, follow=True
    )
    said = response.content.decode()
    assert "the only answer of 9 system × vignette was selected for judging (alpha × v1, beta × v1" in said
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE
    assert Answer.objects.filter(selected=True).count() == 9
    assert study.cells.count() == 9
