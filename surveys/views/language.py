"""Participant pages speak the study's language: no browser negotiation (LocaleMiddleware), the study decides."""

from functools import wraps

from django.conf import settings
from django.utils import translation

from ..services.live_content import study_language


def in_study_language(view):
    """Run a view taking `slug` with the study's language active; the page is rendered in it."""

    @wraps(view)
    def wrapped(request, slug: str, *args, **kwargs):
        language = study_language(slug)  # read once per process for a live study
        with translation.override(language or settings.LANGUAGE_CODE):
            request.LANGUAGE_CODE = translation.get_language()
            response = view(request, slug, *args, **kwargs)
            response.headers.setdefault("Content-Language", request.LANGUAGE_CODE)
            return response

    return wrapped
