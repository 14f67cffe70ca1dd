"""A study's language: the interface its participants see, and its texts in that language.

A study has one language (`Study.language`). Its texts are written in the fields themselves and may be
given in other languages in each object's `translations`, keyed by language code:
    {"de": {"text": "…"}}  — a question or vignette (vignettes also `character`)
    {"de": {"action": "…", "additional_information": "…", "features": [{"feature": "…", "reason": "…"}]}}  — an answer
    {"de": {"name": "…", "description": "…", "attention_prompt": "…", "attention_options": ["…", "…"]}}  — a study
A text not given in the study's language falls back to the field itself.
"""

import re
from typing import Any

from django.utils import translation
from django.utils.translation import gettext

from ..models import DEFAULT_ATTENTION_OPTIONS, DEFAULT_ATTENTION_PROMPT, Answer, Question, Study, Vignette

LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})*\Z")

# What each kind of object may translate: key → "text" (non-empty) or a special shape.
TRANSLATABLE: dict[type, dict[str, str]] = {
    Study: {"name": "text", "description": "text", "attention_prompt": "text", "attention_options": "two texts"},
    Question: {"text": "text"},
    Vignette: {"text": "text", "character": "text"},
    Answer: {"action": "text", "additional_information": "text", "features": "features"},
}


def translation_problems(translations: Any, keys: dict[str, str]) -> list[str]:
    """Why `translations` is not a valid translations object for an object with these keys ([] if it is)."""
    if not isinstance(translations, dict):
        return ['must be an object keyed by language code, e.g. {"de": {…}}']
    problems = []
    for language, texts in translations.items():
        if not LANGUAGE_CODE.match(str(language)):
            problems.append(f"'{language}' is not a language code (such as de, ar or pt-br)")
            continue
        if not isinstance(texts, dict):
            problems.append(f'{language}: must be an object of texts, e.g. {{"{next(iter(keys))}": "…"}}')
            continue
        for key, value in texts.items():
            kind = keys.get(key)
            if kind is None:
                problems.append(f"{language}.{key}: is not translatable here (only {', '.join(keys)})")
            elif kind == "text" and not (isinstance(value, str) and value.strip()):
                problems.append(f"{language}.{key}: must be a non-empty text")
            elif kind == "two texts" and not (
                isinstance(value, list) and len(value) == 2 and all(isinstance(o, str) and o.strip() for o in value)
            ):
                problems.append(f"{language}.{key}: must be a list of exactly two texts")
            elif kind == "features" and not (
                isinstance(value, list)
                and all(isinstance(f, dict) and set(f) <= {"feature", "reason"} for f in value)
                and all(isinstance(text, str) for f in value for text in f.values())
            ):
                problems.append(f'{language}.{key}: must be a list of {{"feature": "…", "reason": "…"}}, in order')
    return problems


def _texts(obj, language: str | None) -> dict:
    language = (language or translation.get_language() or "").lower()
    translations = getattr(obj, "translations", None) or {}
    return translations.get(language) or translations.get(language.split("-")[0]) or {}


def translated(obj, field: str, language: str | None = None) -> Any:
    """`obj.field` in `language` (default: the active one), else as written."""
    return _texts(obj, language).get(field) or getattr(obj, field)


def translated_features(answer: Answer, features: list, language: str | None = None) -> list[dict]:
    """An answer's features (in order) with their names and reasons in `language` where given."""
    given = _texts(answer, language).get("features") or []
    shown = []
    for index, feature in enumerate(features):
        other = given[index] if index < len(given) else {}
        shown.append(
            {
                "feature": other.get("feature") or feature.feature,
                "weight": feature.weight,
                "reason": other.get("reason") or feature.reason,
            }
        )
    return shown


def attention_texts(study: Study, options: list[str]) -> tuple[str, list[str]]:
    """The attention check's prompt and options in the active language (the method's default ones translated)."""
    prompt = translated(study, "attention_prompt")
    if prompt == DEFAULT_ATTENTION_PROMPT:
        prompt = gettext(DEFAULT_ATTENTION_PROMPT)
    given = _texts(study, None).get("attention_options")
    if given:
        return prompt, list(given)
    if options == DEFAULT_ATTENTION_OPTIONS:
        options = [gettext(option) for option in options]
    return prompt, options
