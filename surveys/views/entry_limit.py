"""The entry rate limit at the door of a survey view (ENTRY_RATE_LIMIT; surveys/services/entry_limit.py)."""

from collections.abc import Callable
from functools import wraps

from django.shortcuts import render

from moraljudge.client_address import client_address

from ..models import Respondent
from ..services.entry_limit import admit_entry
from ..services.errors import EntryRateLimited


def respondent_exists(request, slug: str) -> bool:
    """Whether the link's PROLIFIC_PID and SESSION_ID already have their respondent in the answer-writing
    study (a resume); the same PID in another session is charged like anyone new."""
    return Respondent.objects.filter(
        study__slug=slug,
        prolific_pid=request.GET.get("PROLIFIC_PID", ""),
        session_id=request.GET.get("SESSION_ID", ""),
    ).exists()


def rate_limited_entry(*, resuming: Callable, template: str):
    """Charge a request that would start someone new (it carries PROLIFIC_PID and is no resume) to its
    client address; beyond ENTRY_RATE_LIMIT answer 429 with `template` (its `message` says what to do)."""

    def decorate(view):
        @wraps(view)
        def guarded(request, slug, *args, **kwargs):
            if request.GET.get("PROLIFIC_PID") and not resuming(request, slug):
                try:
                    admit_entry(client_address(request))
                except EntryRateLimited as exc:
                    message = " ".join(exc.messages)
                    return render(request, template, {"message": message, "problems": exc.messages}, status=429)
            return view(request, slug, *args, **kwargs)

        return guarded

    return decorate
