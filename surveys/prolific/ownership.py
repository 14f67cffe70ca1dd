"""Which Prolific study belongs to which study: one platform study per Prolific study, checked before every action.

The deployment talks to Prolific with one token (docs/teams.md), so Prolific itself cannot tell one team's study
from another's: this module does. A Prolific study id is unique across the deployment (a database constraint), is
set by the platform when 'Create or update Prolific draft' creates the draft (recorded as an audit event, the list
of drafts this deployment made), and is linked by hand only after Prolific's API shows that it is this study's:
a draft this deployment created for it, or one whose study link on Prolific leads to this study's judging page
(which only someone who controls the Prolific study can set). Once the study is live here, or the Prolific study
is published, the link never changes.

`owned_prolific_study` is the one check every Prolific action calls (draft, publish, places, review,
reconciliation, bonuses, webhook attribution); `link_prolific_study` is the one way to link by hand.
`check_writer_submission` does the same for an answer writer's submission (their own Prolific study, whose id
the platform only learns from the writer's link) before they are asked to return it.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from ..models import AuditEvent, Respondent, Study
from ..services.audit import record_event
from . import client

ProlificLink = Study.ProlificLink
PROLIFIC_ID = re.compile(r"^[A-Za-z0-9]{1,64}$")  # Prolific's ids are 24 hexadecimal characters
DRAFT_STATUSES = ("", "UNPUBLISHED")


class NotOurProlificStudy(ValidationError):
    """The Prolific study is not (shown to be) this study's: nothing is sent to Prolific."""


def owned_prolific_study(study: Study) -> str:
    """The study's Prolific study id, once checked to be this study's and no other's; raises otherwise.

    Every action that reaches Prolific for a study goes through here first."""
    prolific_id = study.prolific_study_id
    if not prolific_id:
        raise NotOurProlificStudy(f"Study '{study.slug}' has no Prolific study id yet: create the draft first.")
    if study.prolific_link not in ProlificLink.values:
        raise NotOurProlificStudy(
            f"Study '{study.slug}': its Prolific study {prolific_id} was never shown to be this study's. Link it "
            "again in the study's Prolific settings (Prolific's API is asked whose it is)."
        )
    if Study.objects.filter(prolific_study_id=prolific_id).exclude(pk=study.pk).exists():
        raise NotOurProlificStudy(f"The Prolific study {prolific_id} belongs to another study: nothing was sent.")
    created_for = _created_for(prolific_id)
    if created_for is not None and created_for != study.pk:
        raise NotOurProlificStudy(
            f"The Prolific study {prolific_id} was created by this deployment for another study: nothing was sent."
        )
    return prolific_id


def is_changeable(study: Study) -> bool:
    """A study's Prolific link can change only while the study is a draft here and its Prolific study a draft."""
    if not study.prolific_study_id:
        return True
    return study.status == Study.Status.DRAFT and study.prolific_status in DRAFT_STATUSES


def check_prolific_link(*, study: Study, prolific_id: str) -> str:
    """How `prolific_id` may be linked to `study` by hand (a ProlificLink value, "" to unlink); raises
    NotOurProlificStudy with the reason otherwise. Asks Prolific's API (one GET) unless unlinking."""
    prolific_id = prolific_id.strip()
    if prolific_id == study.prolific_study_id:
        return study.prolific_link
    if not is_changeable(study):
        raise NotOurProlificStudy(
            f"Study '{study.slug}' is {study.status} here and its Prolific study {study.prolific_study_id} is "
            f"{study.prolific_status or 'linked'}: the link can no longer change."
        )
    if not prolific_id:
        return ""
    if study.pk is None:
        raise NotOurProlificStudy("Save the study first, then link its Prolific study.")
    if not PROLIFIC_ID.match(prolific_id):
        raise NotOurProlificStudy("A Prolific study id is letters and digits only (24 hexadecimal characters).")
    if Study.objects.filter(prolific_study_id=prolific_id).exclude(pk=study.pk).exists():
        raise NotOurProlificStudy(f"The Prolific study {prolific_id} already belongs to another study.")
    created_for = _created_for(prolific_id)
    if created_for is not None:
        if created_for != study.pk:
            raise NotOurProlificStudy(
                f"The Prolific study {prolific_id} was created by this deployment for another study."
            )
        client.get_study(prolific_id)  # it still exists, for this deployment's token
        return ProlificLink.CREATED
    try:
        remote = client.get_study(prolific_id)
    except client.Permanent as exc:
        raise NotOurProlificStudy(
            f"Prolific does not show the study {prolific_id} to this deployment ({exc.status_code or exc})."
        ) from exc
    if _leads_to(str(remote.get("external_study_url") or ""), study):
        return ProlificLink.PROVEN
    raise NotOurProlificStudy(
        f"The Prolific study {prolific_id} is not shown to be this study's: set its study link on Prolific to "
        f"this study's judging link ({judging_path(study)}) and link it again, or let 'Create or update Prolific "
        "draft' create the study."
    )


@transaction.atomic
def link_prolific_study(*, study: Study, prolific_id: str, by=None) -> Study:
    """Link (or, while allowed, unlink) the study's Prolific study by hand, after `check_prolific_link`."""
    prolific_id = prolific_id.strip()
    study = Study.objects.select_for_update().get(pk=study.pk)
    if prolific_id == study.prolific_study_id:
        return study
    link = check_prolific_link(study=study, prolific_id=prolific_id)
    before = study.prolific_study_id
    fields: dict[str, object] = {"prolific_study_id": prolific_id, "prolific_link": link}
    if not prolific_id:
        fields |= {"prolific_status": "", "prolific_synced_at": None}
    try:
        with transaction.atomic():
            Study.objects.filter(pk=study.pk).update(**fields)
    except IntegrityError as exc:  # linked to another study meanwhile
        raise NotOurProlificStudy(f"The Prolific study {prolific_id} already belongs to another study.") from exc
    record_event(
        action=AuditEvent.Action.PROLIFIC_LINKED, user=by, study=study, before=before, after=prolific_id, how=link
    )
    study.refresh_from_db()
    return study


def record_created_draft(*, study: Study, prolific_id: str, by=None) -> None:
    """Store the id of a draft the platform just created, and remember that this deployment made it for `study`."""
    Study.objects.filter(pk=study.pk).update(
        prolific_study_id=prolific_id, prolific_link=ProlificLink.CREATED, prolific_synced_at=timezone.now()
    )
    record_event(action=AuditEvent.Action.PROLIFIC_DRAFT_CREATED, user=by, study=study, prolific_study_id=prolific_id)


def check_writer_submission(respondent: Respondent) -> None:
    """Raise NotOurProlificStudy unless the writer's submission may be acted on for their study.

    Their STUDY_ID and SESSION_ID come from the link they opened, so anyone may type another team's (a STUDY_ID is
    in every participant link): without this, a return request made on one study could reach a submission of
    another team's Prolific study through the deployment's one token. Prolific's API must show the submission as
    this writer's, in that Prolific study, and that Prolific study must be this study's: its own (owned_prolific_study)
    or one whose study link on Prolific opens this study's answer-writing page, which only who controls it can set,
    and no other study's. Asks Prolific (one or two GETs); ProlificError when it cannot be read."""
    study, prolific_id = respondent.study, respondent.prolific_study_id
    if not prolific_id or not respondent.session_id:
        raise NotOurProlificStudy("the writer came without a Prolific study or submission id.")
    if prolific_id == study.prolific_study_id:
        owned_prolific_study(study)
    elif Study.objects.filter(prolific_study_id=prolific_id).exists() or _created_for(prolific_id) is not None:
        raise NotOurProlificStudy(f"the Prolific study {prolific_id} belongs to another study.")
    try:
        submission = client.get_submission(respondent.session_id)
    except client.Permanent as exc:
        raise NotOurProlificStudy(
            f"Prolific does not show the submission {respondent.session_id} ({exc.status_code or exc})."
        ) from exc
    if submission.get("study_id") != prolific_id or submission.get("participant") != respondent.prolific_pid:
        raise NotOurProlificStudy(
            f"Prolific shows the submission {respondent.session_id} as another participant's or another study's."
        )
    if prolific_id != study.prolific_study_id:
        url = str(client.get_study(prolific_id).get("external_study_url") or "")
        if urlsplit(url).path != reverse("surveys:answering-entry", args=[study.slug]):
            raise NotOurProlificStudy(
                f"the Prolific study {prolific_id} does not open this study's answer-writing page "
                f"({reverse('surveys:answering-entry', args=[study.slug])})."
            )


def judging_path(study: Study) -> str:
    return reverse("surveys:judging-entry", args=[study.slug])


def _leads_to(url: str, study: Study) -> bool:
    """The Prolific study's link opens this study's judging page (any host: the deployment may sit behind a proxy)."""
    return bool(url) and urlsplit(url).path == judging_path(study)


def _created_for(prolific_id: str) -> int | None:
    """The study this deployment created `prolific_id` for (its id; 0 when that study is gone), or None."""
    made = (
        AuditEvent.objects.filter(
            action=AuditEvent.Action.PROLIFIC_DRAFT_CREATED, details__prolific_study_id=prolific_id
        )
        .order_by("at", "id")
        .values("study_id")
        .first()
    )
    return None if made is None else (made["study_id"] or 0)
