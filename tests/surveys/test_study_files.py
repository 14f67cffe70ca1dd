import copy
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from surveys.models import Answer, Cell, Feature, Study
from surveys.study_files import StudyFileError, export_study, import_study

DEMO = Path(__file__).resolve().parents[2] / "surveys" / "demo" / "demo.study.json"


def demo_data() -> dict:
    return json.loads(DEMO.read_text(encoding="utf-8"))


def export_json(slug: str) -> dict:
    out = io.StringIO()
    call_command("export_study", slug, stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.django_db
def test_a_complete_live_file_imports_as_a_study_ready_for_judges():
    study = import_study(demo_data())
    assert study.status == Study.Status.LIVE
    assert study.vignettes.count() == 4 and study.systems.count() == 4 and study.questions.count() == 5
    # 6 system pairs on each of 4 vignettes, each wanting the design's repetitions.
    assert Cell.objects.filter(study=study).count() == 24
    assert set(Cell.objects.values_list("target", flat=True)) == {4}


@pytest.mark.django_db
def test_export_then_import_under_a_new_slug_gives_the_same_study(tmp_path):
    import_study(demo_data())
    exported = export_json("demo")
    copy_of = dict(exported, slug="demo-copy")
    path = tmp_path / "copy.json"
    path.write_text(json.dumps(copy_of), encoding="utf-8")
    call_command("import_study", str(path), stdout=io.StringIO())
    again = export_json("demo-copy")
    assert dict(again, slug="demo") == exported


@pytest.mark.django_db
def test_a_file_with_weights_that_do_not_add_up_writes_nothing():
    data = demo_data()
    data["answers"][3]["features"][1]["weight"] -= 10
    with pytest.raises(StudyFileError) as caught:
        import_study(data)
    last = len(data["answers"][3]["features"]) - 1
    assert f"answers[3].features[{last}].weight: weights sum to 90, not 100" in caught.value.errors
    assert Study.objects.count() == 0 and Answer.objects.count() == 0 and Feature.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    "break_it, message",
    [
        (lambda d: d["answers"][0].update(system="nobody"), "answers[0].system: unknown system 'nobody'"),
        (lambda d: d["systems"][1].update(key=d["systems"][0]["key"]), "systems[1].key: duplicate key 'gpt-4o'"),
        (lambda d: d.update(reference_system="ghost"), "reference_system: 'ghost' is not one of the study's systems"),
        (lambda d: d.pop("reference_system"), "study.reference_system: is required"),
        (lambda d: d["design"].update(order="random"), "design.order: 'random' is not one of"),
        (lambda d: d["answers"][2]["features"].extend([{"feature": "x", "weight": 0}] * 4), "at most 5 features"),
    ],
)
def test_bad_files_name_the_place_of_each_error(break_it, message):
    data = demo_data()
    break_it(data)
    with pytest.raises(StudyFileError) as caught:
        import_study(data)
    assert any(message in error for error in caught.value.errors), caught.value.errors
    assert Study.objects.count() == 0


@pytest.mark.django_db
def test_a_live_file_missing_an_answer_is_refused_with_what_is_missing_and_nothing_is_written():
    data = demo_data()
    data["answers"] = [a for a in data["answers"] if not (a["system"] == "claude" and a["vignette"] == "v2")]
    with pytest.raises(StudyFileError) as caught:
        import_study(data)
    assert "no selected answer for system 'claude' on vignette 'v2'" in caught.value.errors[0]
    assert Study.objects.count() == 0


@pytest.mark.django_db
def test_reimporting_a_draft_updates_it_in_place_by_key():
    data = demo_data()
    data["status"] = "draft"
    first = import_study(data)
    changed = copy.deepcopy(data)
    changed["vignettes"][0]["text"] = "A rewritten first vignette."
    changed["vignettes"].pop()  # v4 and its answers go away
    changed["answers"] = [a for a in changed["answers"] if a["vignette"] != "v4"]
    second = import_study(changed)
    assert second.pk == first.pk
    assert list(second.vignettes.values_list("key", flat=True)) == ["v1", "v2", "v3"]
    assert second.vignettes.get(key="v1").text == "A rewritten first vignette."
    assert Answer.objects.for_study(second).count() == 12


@pytest.mark.django_db
def test_reimporting_a_live_study_is_refused():
    import_study(demo_data())
    with pytest.raises(StudyFileError, match="exists and is live"):
        import_study(demo_data())


@pytest.mark.django_db
def test_the_command_reports_errors_and_a_missing_file_clearly(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("import_study", str(bad))
    with pytest.raises(CommandError, match="cannot read the file"):
        call_command("import_study", str(tmp_path / "absent.json"))
    with pytest.raises(CommandError, match="No study with slug 'nope'"):
        call_command("export_study", "nope")


@pytest.mark.django_db
def test_an_export_holds_every_stored_answer_with_its_selected_flag():
    study = import_study(demo_data())
    exported = export_study(study)
    assert len(exported["answers"]) == 16
    assert all(a["selected"] for a in exported["answers"])


PAPER = Path(__file__).resolve().parents[3] / "shared" / "paper"


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["exp1.study.json", "exp2.study.json"])
def test_the_source_study_files_round_trip_when_they_are_at_hand(name, tmp_path):
    if not (PAPER / name).exists():
        pytest.skip("the source study's materials are not beside this checkout")
    call_command("import_study", str(PAPER / name), stdout=io.StringIO())
    original = json.loads((PAPER / name).read_text(encoding="utf-8"))
    exported = export_json(original["slug"])
    assert [v["text"] for v in exported["vignettes"]] == [v["text"] for v in original["vignettes"]]
    assert [s["key"] for s in exported["systems"]] == [s["key"] for s in original["systems"]]
    again = tmp_path / "again.json"
    again.write_text(json.dumps(dict(exported, slug="again")), encoding="utf-8")
    call_command("import_study", str(again), stdout=io.StringIO())
    assert dict(export_json("again"), slug=original["slug"]) == exported


@pytest.mark.django_db
def test_reimporting_a_draft_keeps_the_origin_and_raw_reply_of_answers_it_updates():
    data = demo_data()
    data["status"] = "draft"
    study = import_study(data)
    collected = Answer.objects.get(system__key="gpt-4o", vignette__key="v1")
    Answer.objects.filter(pk=collected.pk).update(origin=Answer.Origin.LLM, raw_text='{"features": []}')
    import_study(export_study(study))
    collected.refresh_from_db()
    assert collected.origin == Answer.Origin.LLM and collected.raw_text == '{"features": []}'
    assert collected.action == data["answers"][0]["action"]
