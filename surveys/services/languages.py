"""A study's language: the interface its participants see, and its texts in that language.

A study has one language (`Study.language`). Its texts are written in the fields themselves and may be
given in other languages in each object's `translations`, keyed by language code:
    {"de": {"text": "…"}}  — a question or vignette (vignettes also `character`)
    {"de": {"action": "…", "additional_information": "…", "features": [{"feature": "…", "reason": "…"}]}}  — an answer
    {"de": {"name": "…", "description": "…", "attention_prompt": "…", "attention_options": ["…", "…"]}}  — a study
A text not given in the study's language falls back to the field itself. What a valid translations object
is (checked by the study file and the admin) is in models/translations.py.
"""

import unicodedata
from pathlib import Path
from typing import Any

from django.conf import settings
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


# Where the script of a language tells whether a text is written in it (Unicode character names start so).
SCRIPTS = {
    **dict.fromkeys(["ar", "fa", "ur", "ps"], ("ARABIC",)),
    **dict.fromkeys(["he", "yi"], ("HEBREW",)),
    **dict.fromkeys(["ru", "uk", "bg", "sr", "be", "mk", "kk"], ("CYRILLIC",)),
    "el": ("GREEK",),
    "zh": ("CJK",),
    "ja": ("CJK", "HIRAGANA", "KATAKANA"),
    "ko": ("HANGUL", "CJK"),
    **dict.fromkeys(["hi", "mr", "ne"], ("DEVANAGARI",)),
    "bn": ("BENGALI",),
    "ta": ("TAMIL",),
    "th": ("THAI",),
}
SOURCE_LANGUAGE = "en"  # the interface is written in English: no translation needed


def interface_languages() -> list[str]:
    """The languages the survey's interface ships in: English and each locale/ with a compiled catalogue."""
    shipped = {SOURCE_LANGUAGE}
    for root in settings.LOCALE_PATHS:
        shipped |= {path.parent.parent.name.lower() for path in Path(root).glob("*/LC_MESSAGES/django.mo")}
    return sorted(shipped)


def _base(language: str) -> str:
    return language.lower().replace("_", "-").split("-")[0]


def interface_warning(language: str) -> str | None:
    """Why participants in `language` would read the interface in English, or None when it ships."""
    shipped = interface_languages()
    if language.lower() in shipped or _base(language) in shipped:
        return None
    return (
        f"no interface translation ships for '{language}' (shipped: {', '.join(shipped)}): participants read the "
        "survey's buttons, instructions and consent page in English (add locale/"
        f"{_base(language)}/LC_MESSAGES, docs/study-files.md)"
    )


def _in_script(text: str, scripts: tuple[str, ...]) -> bool:
    letters = [c for c in text if c.isalpha()]
    return any(unicodedata.name(c, "").startswith(scripts) for c in letters)


def missing_texts(study: Study) -> list[str]:
    """The study's texts participants would not read in its language: named, so the researcher can add them.

    A text is there when translated into the language, or when written in the field in the language's script
    (Arabic letters for ar, say). For a language sharing the Latin script, the fields are taken to be written in
    it unless some texts are translated into it: then those that are not are missing."""
    language = study.language.lower()
    if _base(language) == SOURCE_LANGUAGE:
        return []
    scripts = SCRIPTS.get(_base(language))
    texts: list[tuple[str, Any, str]] = [("the study's description", study, study.description)]
    texts += [(f"question {q.key}", q, q.text) for q in study.questions.all()]
    texts += [(f"vignette {v.key}", v, v.text) for v in study.vignettes.all()]
    answers = Answer.objects.for_study(study).filter(selected=True).select_related("system", "vignette")
    texts += [(f"answer {a.system.key} × {a.vignette.key}", a, a.action) for a in answers]
    texts = [(name, obj, text) for name, obj, text in texts if text]
    translated_any = any(_texts(obj, language) for _, obj, _ in texts)
    missing = []
    for name, obj, text in texts:
        if _texts(obj, language):
            continue
        if (scripts and not _in_script(text, scripts)) or (not scripts and translated_any):
            missing.append(name)
    return missing


def language_warnings(study: Study) -> list[str]:
    """What participants in the study's language would not read in it: the interface, and the study's texts."""
    warnings = [warning] if (warning := interface_warning(study.language)) else []
    missing = missing_texts(study) if study.pk else []
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        warnings.append(
            f"{len(missing)} study texts are not in '{study.language}' (neither translated nor written in it): "
            f"{shown}; participants read them as written (add them under Translations)"
        )
    return warnings
