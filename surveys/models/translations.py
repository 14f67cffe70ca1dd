"""Texts in other languages on a study's rows: what a valid `translations` object is.

The rules are the study file's (services/study_files/format.py) and the admin's (each model's clean()), so
they live with the models; services/languages.py reads the texts out in the participant's language.
Each translatable model names its keys in `TRANSLATABLE_KEYS`: key → "text" (non-empty) or a special shape.
"""

import re
from typing import Any, Protocol

from django.core.exceptions import ValidationError

LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})*\Z")

# Texts in other languages, by language code, e.g. {"de": {"text": "…"}} (docs/study-files.md lists the keys);
# participants of a study see the texts of the study's language, and the field itself where none is given.
TRANSLATIONS_HELP = 'By language code, e.g. {"de": {"text": "…"}}; see docs/study-files.md.'


class Translatable(Protocol):
    """A model with texts in other languages: the keys it translates and its `translations` field."""

    TRANSLATABLE_KEYS: dict[str, str]
    translations: Any


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


def check_translations(row: Translatable) -> None:
    """A row's `translations` (and a study's language) as the admin saves them: the study file's checks."""
    problems: dict[str, str | list[str]] = {}
    language = getattr(row, "language", None)
    if language is not None and not LANGUAGE_CODE.match(language):
        problems["language"] = f"'{language}' is not a language code (such as en, de or ar)."
    found = translation_problems(row.translations, row.TRANSLATABLE_KEYS)
    if found:
        problems["translations"] = found
    if problems:
        raise ValidationError(problems)
