"""A study's language: the interface its participants see, and its texts in that language.

A study has one language (`Study.language`). Its texts are written in the fields themselves and may be
given in other languages in each object's `translations`, keyed by language code:
    {"de": {"text": "…"}}  — a question or vignette (vignettes also `character`)
    {"de": {"action": "…", "additional_information": "…", "features": [{"feature": "…", "reason": "…"}]}}  — an answer
    {"de": {"name": "…", "description": "…", "attention_prompt": "…", "attention_options": ["…", "…"]}}  — a study
A text not given in the study's language falls back to the field itself. What a valid translations object
is (checked by the study file and the admin) is in models/translations.py.
"""

from typing import Any

from django.utils import translation
from django.utils.translation import gettext

from ..models import DEFAULT_ATTENTION_OPTIONS, DEFAULT_ATTENTION_PROMPT, METHOD_QUESTIONS, Answer, Study

# The method's own wording of its five questions ships translated (locale/); a study's own wording does not.
_METHOD_QUESTION_TEXTS = {text for _key, text in METHOD_QUESTIONS}


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


def question_text(question) -> str:
    """A question as judges read it: the study's translation, else the method's wording translated, else as written."""
    text = translated(question, "text")
    return gettext(text) if text in _METHOD_QUESTION_TEXTS else text


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
