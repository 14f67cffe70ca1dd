import copy
import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from surveys.models import Answer, Cell, Feature, Study
from surveys.services.answer_shape import FeatureIn
from surveys.services.study_files import StudyFileError, export_study, import_study, parse_study_file
from surveys.services.study_files.format import (
    SETTING_BLOCKS,
    AnswerEntry,
    QuestionEntry,
    StudyFile,
    SystemEntry,
    VignetteEntry,
)

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "surveys" / "demo" / "demo.study.json"
EXAMPLE = ROOT / "surveys" / "demo" / "example.study.json"
PAPER = ROOT / "tests" / "fixtures" / "paper"


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
    assert study.vignettes.count() == 4
    assert study.systems.count() == 4
    assert study.questions.count() == 5
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
def test_a_file_with_weights_that_do_not_add_up_names_the_answers_features_and_writes_nothing():
    data = demo_data()
    data["answers"][3]["features"][1]["weight"] -= 10
    with pytest.raises(StudyFileError) as caught:
        import_study(data)
    # The answer by its system and vignette, and the weights that make the sum: no one feature is wrong.
    assert caught.value.errors == [
        "answers[3].features: weights sum to 90, not 100, in the answer of system 'philosopher' to vignette 'v1' "
        "(sample 1): 45 (Property rights and the duty of restitution) + 5 (Need as mitigating rather than "
        "justifying) + 25 (Universalisability) + 15 (Proportionality of the burden of return) = 90. "
        "Change the weights in this features list so that they add up to 100"
    ]
    assert Study.objects.count() == 0
    assert Answer.objects.count() == 0
    assert Feature.objects.count() == 0


@pytest.mark.django_db
def test_a_file_with_one_weight_out_of_range_names_that_feature():
    data = demo_data()
    data["answers"][3]["features"][1]["weight"] = 0
    data["answers"][3]["features"][0]["weight"] += 5
    with pytest.raises(StudyFileError) as caught:
        import_study(data)
    assert caught.value.errors == [
        "answers[3].features[1].weight: 0 is outside 1–100: every feature named carries some weight"
    ]
    assert Feature.objects.count() == 0


@pytest.mark.django_db
def test_a_zero_weight_in_a_file_is_refused_at_that_feature():
    data = demo_data()
    features = data["answers"][3]["features"]
    features[0]["weight"] += features[1]["weight"]
    features[1]["weight"] = 0  # the sum still holds: only the zero is wrong
    with pytest.raises(StudyFileError) as caught:
        import_study(data)
    assert caught.value.errors == [
        "answers[3].features[1].weight: 0 is outside 1–100: every feature named carries some weight"
    ]
    assert Study.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("break_it", "message"),
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
    with pytest.raises(
        StudyFileError, match="is live: its questions, vignettes, systems, answers, design and instrument are frozen"
    ):
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


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["exp1.study.json", "exp2.study.json"])
def test_the_source_study_files_import_and_round_trip(name, tmp_path):
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
    assert collected.origin == Answer.Origin.LLM
    assert collected.raw_text == '{"features": []}'
    assert collected.action == data["answers"][0]["action"]


SETTINGS = {
    "description": "Which answer is the better moral judgement?",
    "prolific": {
        "completion_code": "C1DONE",
        "failed_attention_code": "C1ATTN",
        "no_consent_code": "C1NOCONSENT",
        "screened_out_code": "C1FULL",
        "invalid_policy": "reject",
        "estimated_minutes": 12,
    },
    "quality": {
        "fast_fraction_of_median": 0.25,
        "attention_prompt": "Pick the second option.",
        "attention_options": ["No", "Yes"],
    },
    "instrument": {"system_prompt": "You are careful.", "user_prompt": "{character_name}: {vignette}"},
}


@pytest.mark.django_db
def test_a_studys_prolific_codes_policy_attention_wording_and_prompts_survive_export_then_import_under_a_new_slug():
    study = import_study(dict(demo_data(), **SETTINGS))
    exported = export_study(study)
    copy_of = import_study(dict(exported, slug="demo-copy"))
    assert copy_of.description == SETTINGS["description"]
    assert copy_of.prolific_study_id == ""  # a Prolific study belongs to one study: the copy gets its own
    assert copy_of.completion_code == "C1DONE"
    assert copy_of.failed_attention_code == "C1ATTN"
    assert copy_of.no_consent_code == "C1NOCONSENT"
    assert copy_of.screened_out_code == "C1FULL"
    assert copy_of.estimated_minutes == 12
    assert copy_of.invalid_policy == Study.InvalidPolicy.REJECT
    assert copy_of.fast_fraction_of_median == 0.25
    assert copy_of.attention_prompt == "Pick the second option."
    assert copy_of.attention_options == ["No", "Yes"]
    assert copy_of.system_prompt == "You are careful."
    assert copy_of.user_prompt == "{character_name}: {vignette}"
    assert dict(export_study(copy_of), slug="demo") == exported


@pytest.mark.django_db
def test_a_file_without_the_settings_blocks_imports_with_the_models_defaults():
    data = {key: value for key, value in demo_data().items() if key not in {"description", *SETTINGS}}
    study = import_study(data)
    fresh = Study(slug="x", name="x")
    for name in ["description", "completion_code", "invalid_policy", "estimated_minutes", "fast_fraction_of_median"]:
        assert getattr(study, name) == getattr(fresh, name), name
    assert (study.attention_prompt, study.attention_options) == (fresh.attention_prompt, [])
    assert (study.system_prompt, study.user_prompt) == ("", "")


@pytest.mark.django_db
def test_reimporting_a_draft_leaves_settings_the_file_leaves_out_as_they_are():
    data = dict(demo_data(), status="draft", **copy.deepcopy(SETTINGS))
    study = import_study(data)
    again = copy.deepcopy(data)
    del again["description"], again["instrument"], again["prolific"]["completion_code"]
    again["quality"] = {"attention_options": []}
    again["prolific"]["invalid_policy"] = "approve"
    import_study(again)
    study.refresh_from_db()
    assert study.invalid_policy == Study.InvalidPolicy.APPROVE
    assert study.attention_options == []
    assert study.completion_code == "C1DONE"
    assert study.attention_prompt == "Pick the second option."
    assert study.description == SETTINGS["description"]
    assert study.system_prompt == "You are careful."


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("break_it", "message"),
    [
        (lambda d: d["prolific"].update(invalid_policy="maybe"), "prolific.invalid_policy: 'maybe' is not one of"),
        (lambda d: d["prolific"].update(unknown="x"), "prolific.unknown: unknown setting"),
        (lambda d: d["prolific"].update(estimated_minutes=0), "prolific.estimated_minutes: must be a whole number"),
        (lambda d: d["prolific"].update(completion_code="C" * 33), "prolific.completion_code: must be at most 32"),
        (lambda d: d["quality"].update(attention_options=["Only one"]), "quality.attention_options: must be a list"),
        (lambda d: d["quality"].update(attention_options=["No", " "]), "quality.attention_options: must be a list"),
        (lambda d: d["quality"].update(fast_fraction_of_median=1.5), "quality.fast_fraction_of_median: must be a"),
        (lambda d: d["quality"].update(attention_prompt=""), "quality.attention_prompt: is required"),
        (lambda d: d["instrument"].update(user_prompt=7), "instrument.user_prompt: must be text, not int"),
        (lambda d: d.update(instrument="terse"), "instrument: must be an object"),
        (lambda d: d.update(description=["x"]), "study.description: must be text, not list"),
    ],
)
def test_bad_settings_are_named_by_place_and_write_nothing(break_it, message):
    data = dict(demo_data(), **copy.deepcopy(SETTINGS))
    break_it(data)
    with pytest.raises(StudyFileError) as caught:
        import_study(data)
    assert any(error.startswith(message) for error in caught.value.errors), caught.value.errors
    assert Study.objects.count() == 0


DOCS = ROOT / "docs" / "study-files.md"


@pytest.mark.django_db
def test_the_example_study_file_beside_the_demo_imports_as_a_live_study_and_round_trips():
    example = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    study = import_study(example)
    assert (study.slug, study.status) == ("workplace-pilot", Study.Status.LIVE)
    assert study.vignettes.count() == 2
    assert study.systems.count() == 3
    assert study.questions.count() == 5
    assert Cell.objects.filter(study=study).count() == 6  # 3 system pairs × 2 vignettes
    exported = export_study(study)
    assert exported["systems"] == example["systems"]
    assert exported["design"] == example["design"]
    assert len(exported["answers"]) == len(example["answers"]) == 7


@pytest.mark.django_db
def test_the_example_in_the_format_documentation_imports():
    block = DOCS.read_text(encoding="utf-8").split("```json\n", 1)[1].split("```", 1)[0]
    study = import_study(parse_study_file(block))
    assert study.slug == "library-pilot"
    assert study.answers_per_respondent == 1
    assert [a.features.count() for a in Answer.objects.for_study(study).order_by("system__position")] == [2, 1]


def test_the_format_documentation_names_every_key_of_the_format():
    documented = set(re.findall(r"`([a-z_]+)`", DOCS.read_text(encoding="utf-8")))
    shapes = [StudyFile, *SETTING_BLOCKS.values(), QuestionEntry, VignetteEntry, SystemEntry, AnswerEntry, FeatureIn]
    keys = {field.alias or name for shape in shapes for name, field in shape.model_fields.items()}
    assert keys - documented == set()


@pytest.mark.django_db
def test_the_prolific_draft_settings_travel_in_the_study_file_and_bad_ones_are_named():
    data = demo_data()
    data["prolific"] = {"currency": "USD", "hourly_rate": 12.5, "margin_percent": 15}
    study = import_study(data)
    study.refresh_from_db()
    assert (study.prolific_currency, study.prolific_hourly_rate, study.prolific_margin_percent) == ("USD", 12.5, 15)
    exported = export_study(study)["prolific"]
    assert {"currency": "USD", "hourly_rate": 12.5, "margin_percent": 15}.items() <= exported.items()

    for wrong, message in (
        ({"hourly_rate": "12"}, "prolific.hourly_rate: must be a number such as 9.50, not '12'"),
        ({"hourly_rate": 0}, "prolific.hourly_rate:"),
        ({"currency": "EUR"}, "prolific.currency:"),
        ({"margin_percent": -1}, "prolific.margin_percent:"),
    ):
        with pytest.raises(StudyFileError) as caught:
            import_study(demo_data() | {"slug": "other", "prolific": wrong})
        assert caught.value.errors[0].startswith(message), caught.value.errors


@pytest.mark.django_db
def test_vignette_sets_travel_in_the_study_file_and_a_file_without_them_has_one_set():
    data = demo_data()
    for n, vignette in enumerate(data["vignettes"]):
        vignette["set"] = "published" if n < 2 else "novel"
    study = import_study(data)
    assert list(study.vignettes.values_list("set", flat=True)) == ["published", "published", "novel", "novel"]
    exported = export_json("demo")
    assert [v["set"] for v in exported["vignettes"]] == ["published", "published", "novel", "novel"]
    plain = import_study(dict(demo_data(), slug="plain"))
    assert set(plain.vignettes.values_list("set", flat=True)) == {""}
    assert all("set" not in v for v in export_json("plain")["vignettes"])


@pytest.mark.django_db
def test_a_vignette_set_that_is_not_a_slug_is_named():
    data = demo_data()
    data["vignettes"][1]["set"] = "two words"
    with pytest.raises(StudyFileError) as caught:
        import_study(data)
    assert any(error.startswith("vignettes[1].set:") for error in caught.value.errors), caught.value.errors


@pytest.mark.django_db
def test_a_study_file_cannot_link_a_prolific_study_and_an_export_leaves_the_link_behind():
    # Another team's STUDY_ID is in every participant link: a file must not attach it (ownership.py checks Prolific).
    data = dict(demo_data(), prolific={"study_id": "65f0c0ffee00000000000000"})
    with pytest.raises(StudyFileError, match="study_id: a Prolific study is linked in the study's admin page"):
        import_study(data)
    assert not Study.objects.filter(prolific_study_id="65f0c0ffee00000000000000").exists()
    study = import_study(demo_data())
    Study.objects.filter(pk=study.pk).update(prolific_study_id="65f0c0ffee00000000000000")
    study.refresh_from_db()
    assert "study_id" not in export_study(study).get("prolific", {})
