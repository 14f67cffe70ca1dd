"""Study files: the JSON format of DESIGN.md, read by `import_study` and written by `export_study`.

Re-importing a slug that already exists updates that study in place while it is a draft: items
are matched by key, changed where the file differs, added where new and removed where the file
no longer has them; answers are matched by system × vignette × sample. A live or closed study is
never changed by an import (its judges' pages must not shift under them): the import is refused.

The optional blocks `prolific`, `quality` and `instrument` (and the top-level `description`) carry
the study's settings beyond the design; an export always writes them. On import a key that is
absent leaves its field as it is (a new study: the model's default).
"""

import json
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from .answers import FeatureIn, feature_errors, replace_features
from .lifecycle import close_study, go_live
from .models import Answer, Question, Study, System, Vignette

DESIGN_FIELDS = {  # study-file design key -> Study field
    "repetitions": "repetitions",
    "vignettes_per_participant": "vignettes_per_participant",
    "order": "order_rule",
    "answers_per_respondent": "answers_per_respondent",
    "minimum_seconds": "minimum_seconds",
    "reservation_minutes": "reservation_minutes",
}
PROLIFIC_FIELDS = {  # study-file prolific key -> Study field
    "study_id": "prolific_study_id",
    "completion_code": "completion_code",
    "failed_attention_code": "failed_attention_code",
    "no_consent_code": "no_consent_code",
    "screened_out_code": "screened_out_code",
    "invalid_policy": "invalid_policy",
    "estimated_minutes": "estimated_minutes",
}
QUALITY_FIELDS = {  # minimum_seconds stays in the design block, where files have always had it
    "fast_fraction_of_median": "fast_fraction_of_median",
    "attention_prompt": "attention_prompt",
    "attention_options": "attention_options",
}
INSTRUMENT_FIELDS = {"system_prompt": "system_prompt", "user_prompt": "user_prompt"}  # empty: the method's
SETTING_BLOCKS = {"prolific": PROLIFIC_FIELDS, "quality": QUALITY_FIELDS, "instrument": INSTRUMENT_FIELDS}
SYSTEM_OPTIONAL = ("provider", "model", "base_url", "api_key_env")


class StudyFileError(Exception):
    """A study file that cannot be imported; `errors` name each problem's place in the file."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("\n".join(errors))


@dataclass
class _Checker:
    errors: list[str] = field(default_factory=list)

    def add(self, place: str, message: str) -> None:
        self.errors.append(f"{place}: {message}")

    def text(self, data: dict, key: str, place: str, *, required: bool = True) -> str:
        value = data.get(key)
        if value is None or value == "":
            if required:
                self.add(f"{place}.{key}", "is required")
            return ""
        if not isinstance(value, str):
            self.add(f"{place}.{key}", f"must be text, not {type(value).__name__}")
            return ""
        return value

    def items(self, data: dict, key: str, *, required: bool = True) -> list[dict]:
        value = data.get(key)
        if value is None:
            if required:
                self.add(key, "is required")
            return []
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            self.add(key, "must be a list of objects")
            return []
        return value

    def unique_keys(self, items: list[dict], name: str) -> set[str]:
        seen: set[str] = set()
        for index, item in enumerate(items):
            key = self.text(item, "key", f"{name}[{index}]")
            if key and key in seen:
                self.add(f"{name}[{index}].key", f"duplicate key '{key}'")
            seen.add(key)
        return seen


def parse_study_file(text: str) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StudyFileError([f"line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg})"]) from exc
    if not isinstance(data, dict):
        raise StudyFileError(["the file must hold one JSON object"])
    return data


def check_study_file(data: dict) -> list[str]:
    """Every problem in the file, each naming its place; an empty list means it can be imported."""
    check = _Checker()
    slug = check.text(data, "slug", "study")
    if slug and not slug.replace("-", "").replace("_", "").isalnum():
        check.add("slug", f"'{slug}' may hold only letters, digits, hyphens and underscores")
    check.text(data, "name", "study")
    check.text(data, "description", "study", required=False)
    status = data.get("status", Study.Status.DRAFT)
    if status not in Study.Status.values:
        check.add("status", f"'{status}' is not one of {', '.join(Study.Status.values)}")
    _check_design(check, data.get("design", {}))
    for block in SETTING_BLOCKS:
        if block in data:
            _check_settings(check, block, data[block])

    questions = check.items(data, "questions")
    check.unique_keys(questions, "questions")
    for index, question in enumerate(questions):
        check.text(question, "text", f"questions[{index}]")

    vignettes = check.items(data, "vignettes")
    vignette_keys = check.unique_keys(vignettes, "vignettes")
    for index, vignette in enumerate(vignettes):
        check.text(vignette, "text", f"vignettes[{index}]")
        check.text(vignette, "character", f"vignettes[{index}]")

    systems = check.items(data, "systems")
    system_keys = check.unique_keys(systems, "systems")
    for index, system in enumerate(systems):
        _check_system(check, system, f"systems[{index}]")
    reference = check.text(data, "reference_system", "study")
    if reference and systems and reference not in system_keys:
        check.add("reference_system", f"'{reference}' is not one of the study's systems")

    answers = check.items(data, "answers", required=False)
    _check_answers(check, answers, system_keys, vignette_keys)
    return check.errors


def _check_design(check: _Checker, design: Any) -> None:
    if not isinstance(design, dict):
        check.add("design", "must be an object")
        return
    for key, value in design.items():
        if key not in DESIGN_FIELDS:
            check.add(f"design.{key}", f"unknown setting (known: {', '.join(DESIGN_FIELDS)})")
        elif key == "order":
            if value not in Study.OrderRule.values:
                check.add("design.order", f"'{value}' is not one of {', '.join(Study.OrderRule.values)}")
        elif not isinstance(value, int) or isinstance(value, bool) or value < 1:
            check.add(f"design.{key}", f"must be a whole number of at least 1, not {value!r}")


def _check_settings(check: _Checker, block: str, settings: Any) -> None:
    if not isinstance(settings, dict):
        check.add(block, "must be an object")
        return
    fields = SETTING_BLOCKS[block]
    for key, value in settings.items():
        place = f"{block}.{key}"
        if key not in fields:
            check.add(place, f"unknown setting (known: {', '.join(fields)})")
        elif key == "invalid_policy":
            if value not in Study.InvalidPolicy.values:
                check.add(place, f"{value!r} is not one of {', '.join(Study.InvalidPolicy.values)}")
        elif key == "estimated_minutes":
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                check.add(place, f"must be a whole number of at least 1, not {value!r}")
        elif key == "fast_fraction_of_median":
            if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1:
                check.add(place, f"must be a number from 0 to 1, not {value!r}")
        elif key == "attention_options":
            # As in the admin: anything but [] or two texts would show judges the default options instead.
            two_texts = isinstance(value, list) and len(value) == 2
            if value not in ([], None) and not (two_texts and all(isinstance(o, str) and o.strip() for o in value)):
                check.add(place, f"must be a list of exactly two texts, or [], not {value!r}")
        else:  # text; only the attention prompt may not be empty (judges are shown it)
            text = check.text(settings, key, block, required=key == "attention_prompt")
            max_length = Study._meta.get_field(fields[key]).max_length
            if max_length and len(text) > max_length:
                check.add(place, f"must be at most {max_length} characters, not {len(text)}")


def _check_system(check: _Checker, system: dict, place: str) -> None:
    check.text(system, "label", place)
    kind = system.get("kind", System.Kind.LLM)
    if kind not in System.Kind.values:
        check.add(f"{place}.kind", f"'{kind}' is not one of {', '.join(System.Kind.values)}")
    for key in SYSTEM_OPTIONAL:
        check.text(system, key, place, required=kind == System.Kind.LLM and key in ("provider", "model"))
    provider = system.get("provider")
    if provider and provider not in System.Provider.values:
        check.add(f"{place}.provider", f"'{provider}' is not one of {', '.join(System.Provider.values)}")
    if "parameters" in system and not isinstance(system["parameters"], dict):
        check.add(f"{place}.parameters", "must be an object")


def _check_answers(check: _Checker, answers: list[dict], system_keys: set[str], vignette_keys: set[str]) -> None:
    seen: set[tuple] = set()
    selected: set[tuple] = set()
    for index, answer in enumerate(answers):
        place = f"answers[{index}]"
        system = check.text(answer, "system", place)
        vignette = check.text(answer, "vignette", place)
        if system and system not in system_keys:
            check.add(f"{place}.system", f"unknown system '{system}'")
        if vignette and vignette not in vignette_keys:
            check.add(f"{place}.vignette", f"unknown vignette '{vignette}'")
        sample = answer.get("sample", 1)
        if not isinstance(sample, int) or isinstance(sample, bool) or sample < 1:
            check.add(f"{place}.sample", f"must be a whole number of at least 1, not {sample!r}")
        if (system, vignette, sample) in seen:
            check.add(place, f"duplicate answer for system '{system}', vignette '{vignette}', sample {sample}")
        seen.add((system, vignette, sample))
        if answer.get("selected"):
            if (system, vignette) in selected:
                check.add(f"{place}.selected", f"a second selected answer for '{system}' on '{vignette}'")
            selected.add((system, vignette))
        check.text(answer, "action", place, required=False)
        check.text(answer, "additional_information", place, required=False)
        _check_features(check, answer.get("features"), place)


def _check_features(check: _Checker, features: Any, place: str) -> None:
    if not isinstance(features, list) or not all(isinstance(item, dict) for item in features):
        check.add(f"{place}.features", "must be a list of objects")
        return
    for index, item in enumerate(features):
        check.text(item, "feature", f"{place}.features[{index}]")
        weight = item.get("weight")
        if not isinstance(weight, int) or isinstance(weight, bool):
            check.add(f"{place}.features[{index}].weight", f"must be a whole number, not {weight!r}")
    parsed = _features_in(features)
    if parsed is None:
        return
    for message in feature_errors(parsed):
        if message.startswith("features["):
            check.add(f"{place}.{message.split(':')[0]}", message.split(": ", 1)[1])
        else:
            # Name the last feature for a bad total: that is where a researcher's eye goes.
            where = f"{place}.features[{len(parsed) - 1}].weight" if parsed else f"{place}.features"
            check.add(where, message)


def _features_in(features: list[dict]) -> list[FeatureIn] | None:
    try:
        return [FeatureIn(str(f.get("feature", "")), int(f.get("weight")), str(f.get("reason", ""))) for f in features]
    except (TypeError, ValueError):
        return None


@transaction.atomic
def import_study(data: dict) -> Study:
    """Create or update the study a file describes, all or nothing."""
    errors = check_study_file(data)
    if errors:
        raise StudyFileError(errors)
    study = Study.objects.filter(slug=data["slug"]).first()
    if study and study.status != Study.Status.DRAFT:
        raise StudyFileError(
            [f"slug: study '{study.slug}' exists and is {study.status}; only a draft study can be re-imported"]
        )
    study = study or Study(slug=data["slug"])
    study.name = data["name"]
    if "description" in data:
        study.description = data["description"] or ""
    for key, field_name in DESIGN_FIELDS.items():
        if key in data.get("design", {}):
            setattr(study, field_name, data["design"][key])
    _apply_settings(study, data)
    study.save()

    _sync(study, Question, data["questions"], lambda q: {"text": q["text"]})
    _sync(
        study,
        Vignette,
        data["vignettes"],
        lambda v: {"text": v["text"], "character": v["character"], "source": v.get("source", "")},
    )
    systems = _sync(study, System, data["systems"], _system_fields)
    study.reference_system = systems[data["reference_system"]]
    study.save(update_fields=["reference_system"])
    _import_answers(study, data.get("answers", []))

    try:
        status = data.get("status", Study.Status.DRAFT)
        if status in (Study.Status.LIVE, Study.Status.CLOSED):
            study = go_live(study=study)
        if status == Study.Status.CLOSED:
            study = close_study(study=study)
    except ValidationError as exc:
        raise StudyFileError([f"status: {message}" for message in exc.messages]) from exc
    return study


def _apply_settings(study: Study, data: dict) -> None:
    """Set the fields the file's optional blocks name; a key the file leaves out leaves its field alone."""
    for block, fields in SETTING_BLOCKS.items():
        for key, value in data.get(block, {}).items():
            if key == "fast_fraction_of_median":
                value = float(value)
            elif key == "attention_options":
                value = list(value or [])
            elif value is None:
                value = ""
            setattr(study, fields[key], value)


def _system_fields(system: dict) -> dict:
    fields = {key: system.get(key) or "" for key in SYSTEM_OPTIONAL}
    fields.update(
        label=system["label"], kind=system.get("kind", System.Kind.LLM), parameters=system.get("parameters", {})
    )
    return fields


def _sync(study: Study, model, items: list[dict], fields_of) -> dict:
    """Make the study's rows of `model` match the file's items, by key; return them by key."""
    existing = {row.key: row for row in model.objects.filter(study=study)}
    rows = {}
    for position, item in enumerate(items):
        row = existing.pop(item["key"], None) or model(study=study, key=item["key"])
        for name, value in fields_of(item).items():
            setattr(row, name, value)
        row.position = position
        row.save()
        rows[row.key] = row
    for stale in existing.values():
        stale.delete()
    return rows


def _import_answers(study: Study, answers: list[dict]) -> None:
    systems = {s.key: s for s in study.systems.all()}
    vignettes = {v.key: v for v in study.vignettes.all()}
    Answer.objects.for_study(study).update(selected=False)
    keep = set()
    for item in answers:
        fields = {
            "action": item.get("action") or "",
            "additional_information": item.get("additional_information") or "",
            "selected": bool(item.get("selected")),
        }
        if "raw_text" in item:  # exports leave it out; an LLM answer's raw reply must survive a round trip
            fields["raw_text"] = item["raw_text"] or ""
        answer, _ = Answer.objects.update_or_create(
            system=systems[item["system"]],
            vignette=vignettes[item["vignette"]],
            sample=item.get("sample", 1),
            defaults=fields,
            # An answer written in the survey or collected from an LLM keeps its origin when a file updates it.
            create_defaults={**fields, "origin": Answer.Origin.IMPORTED},
        )
        replace_features(answer=answer, features=_features_in(item["features"]))
        keep.add(answer.pk)
    Answer.objects.for_study(study).filter(origin=Answer.Origin.IMPORTED).exclude(pk__in=keep).delete()


def export_study(study: Study) -> dict:
    """The study as a study file; importing it gives back the same study."""
    design = {key: getattr(study, field_name) for key, field_name in DESIGN_FIELDS.items()}
    answers = (
        Answer.objects.for_study(study)
        .select_related("system", "vignette")
        .prefetch_related("features")
        .order_by("vignette__position", "system__position", "sample")
    )
    return {
        "slug": study.slug,
        "name": study.name,
        "description": study.description,
        "status": study.status,
        "reference_system": study.reference_system.key if study.reference_system else None,
        "design": design,
        "prolific": {key: getattr(study, name) for key, name in PROLIFIC_FIELDS.items()},
        "quality": {
            "fast_fraction_of_median": study.fast_fraction_of_median,
            "attention_prompt": study.attention_prompt,
            "attention_options": list(study.attention_options or []),
        },
        "instrument": {key: getattr(study, name) for key, name in INSTRUMENT_FIELDS.items()},
        "questions": [{"key": q.key, "text": q.text} for q in study.questions.all()],
        "systems": [_export_system(s) for s in study.systems.all()],
        "vignettes": [
            {"key": v.key, "character": v.character, "source": v.source, "text": v.text} for v in study.vignettes.all()
        ],
        "answers": [_export_answer(a) for a in answers],
    }


def _export_system(system: System) -> dict:
    out = {"key": system.key, "label": system.label, "kind": system.kind}
    out.update({key: getattr(system, key) for key in SYSTEM_OPTIONAL if getattr(system, key)})
    if system.parameters:
        out["parameters"] = system.parameters
    return out


def _export_answer(answer: Answer) -> dict:
    return {
        "system": answer.system.key,
        "vignette": answer.vignette.key,
        "sample": answer.sample,
        "features": [{"feature": f.feature, "weight": f.weight, "reason": f.reason} for f in answer.features.all()],
        "action": answer.action,
        "additional_information": answer.additional_information,
        "selected": answer.selected,
    }
