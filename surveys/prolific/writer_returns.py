"""Answer writers whose answers were rated low authenticity: ask them, on Prolific, to return the submission.

Never automatic and never a rejection: a researcher chooses the writers (an admin action) after reviewing
their answers, and the study's invalid-submission policy decides what is sent. Under "approve anyway"
nothing is sent (they are paid; the researcher simply does not select their answers); under "ask to
return" and under "reject" they are asked to return, since how an answer was typed is no reason Prolific
accepts for a rejection and our rating can be wrong (docs/authenticity.md).
"""

from __future__ import annotations

import logging

from django.utils import timezone

from ..models import Answer, AuditEvent, Respondent, Study
from ..services.audit import record_event
from . import client
from .client import ProlificError
from .ownership import NotOurProlificStudy, check_writer_submission

log = logging.getLogger(__package__)

RETURN_REASON = "Answers appear to have been pasted in rather than written in your own words"


def low_authenticity_writers(respondents):
    """Those of these respondents who wrote on Prolific, have at least one low-rated answer, and were not asked yet."""
    low = Answer.objects.filter(authenticity=Answer.Authenticity.LOW).values("pk")
    return (
        respondents.filter(tasks__answer__in=low, return_requested_at__isnull=True)
        .exclude(session_id="")
        .select_related("study")
        .distinct()
    )


def ask_writers_to_return(*, respondents, user=None) -> list[str]:
    """Ask each chosen low-authenticity writer to return their submission, as their study's policy says."""
    messages = []
    asked: dict[int, tuple[Study, list[str]]] = {}
    for respondent in low_authenticity_writers(respondents):
        study = respondent.study
        if study.invalid_policy == Study.InvalidPolicy.APPROVE:
            messages.append(f"{respondent}: not asked — study '{study.slug}' approves invalid submissions.")
            continue
        try:
            check_writer_submission(respondent)
        except NotOurProlificStudy as exc:
            messages.append(f"{respondent}: not asked — {' '.join(exc.messages)}")
            continue
        except ProlificError as exc:
            messages.append(f"{respondent}: not asked — Prolific could not be asked whose submission it is: {exc}")
            continue
        try:
            client.request_return(respondent.session_id, reasons=[RETURN_REASON])
        except ProlificError as exc:
            messages.append(f"{respondent}: Prolific refused the return request: {exc}")
            continue
        by = f" by {user}" if user is not None else ""
        Respondent.objects.filter(pk=respondent.pk).update(
            return_requested_at=timezone.now(), return_request=f"{RETURN_REASON} (asked{by})"
        )
        messages.append(f"Asked {respondent} to return the submission ({RETURN_REASON}).")
        asked.setdefault(study.pk, (study, []))[1].append(respondent.prolific_pid)
    for study, who in asked.values():  # a return request means the writer is not paid: audited
        record_event(
            action=AuditEvent.Action.WRITERS_ASKED_TO_RETURN, user=user, study=study, writers=who, reason=RETURN_REASON
        )
    if not messages:
        messages.append("None of the chosen writers has a low-authenticity answer still to act on.")
    log.info("return requests for low-authenticity writers: %s", messages)
    return messages
