"""Template filters for participant pages: a study's texts in its language, and its expected duration."""

from django import template

from ..services import duration
from ..services.languages import translated, translated_features

register = template.Library()


@register.filter
def in_language(obj, field: str):
    """{{ vignette|in_language:"text" }}: the text in the study's language, else as written."""
    return translated(obj, field)


@register.filter
def features_in_language(answer, features):
    """{% for feature in answer|features_in_language:answer.shown_features %}"""
    return translated_features(answer, features)


@register.filter
def estimated_minutes(study) -> int:
    """{{ study|estimated_minutes }}: the time a participant should expect (surveys/services/duration.py).

    A live study's is reused for up to a minute (`duration.shown_minutes`)."""
    return duration.shown_minutes(study)
