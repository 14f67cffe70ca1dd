"""A Prolific study belongs to one study (surveys/prolific/ownership.py), against the fake Prolific API on 127.0.0.1:
another team's STUDY_ID (in every participant link) cannot be linked, published, given places or credited."""

import pytest
from django.db import IntegrityError, transaction

from surveys.models import AuditEvent, Participant, Study
from surveys.prolific import drafts, receive_webhook_event, reconcile_study
from surveys.prolific.ownership import NotOurProlificStudy, link_prolific_study, owned_prolific_study
from surveys.services.lifecycle import go_live
from tests.conftest import make_study

pytestmark = pytest.mark.django_db
CODES = {"completion_code": "DONE1", "description": "Compare two answers."}


def victim_on_prolific(prolific) -> Study:
    """The victim's study, live, with the Prolific draft the platform created for it, published."""
    victim = go_live(study=make_study(slug="victim", **CODES))
    sent = drafts.send_draft(study=victim, study_url="https://judge.example.org/s/victim/")
    victim.refresh_from_db()
    drafts.publish(study=victim)
    victim.refresh_from_db()
    assert (victim.prolific_study_id, victim.prolific_link) == (sent.prolific_id, Study.ProlificLink.CREATED)
    return victim


def test_an_outsider_cannot_link_another_teams_prolific_study_to_their_own_draft(prolific):
    victim = victim_on_prolific(prolific)
    outsider = make_study(slug="outsider", **CODES)
    with pytest.raises(NotOurProlificStudy, match="already belongs to another study"):
        link_prolific_study(study=outsider, prolific_id=victim.prolific_study_id)
    # Not even by writing the row directly: the database keeps one study per Prolific study.
    with pytest.raises(IntegrityError), transaction.atomic():
        Study.objects.filter(pk=outsider.pk).update(prolific_study_id=victim.prolific_study_id)
    outsider.refresh_from_db()
    assert outsider.prolific_study_id == ""


def test_a_prolific_study_made_for_a_study_now_gone_is_still_not_anyone_elses(prolific):
    victim = make_study(slug="victim", **CODES)
    prolific_id = drafts.send_draft(study=victim, study_url="https://judge.example.org/s/victim/").prolific_id
    victim.delete()  # the audit trail still says this deployment made it for that study
    outsider = make_study(slug="outsider", **CODES)
    with pytest.raises(NotOurProlificStudy, match="created by this deployment for another study"):
        link_prolific_study(study=outsider, prolific_id=prolific_id)


def test_an_unchecked_link_reaches_nothing_on_prolific(prolific):
    """Whatever wrote the id (an old row, a future code path): without a recorded link no action is sent."""
    victim = victim_on_prolific(prolific)
    prolific_id = victim.prolific_study_id
    Study.objects.filter(pk=victim.pk).update(prolific_study_id="")
    outsider = go_live(study=make_study(slug="outsider", **CODES))
    Study.objects.filter(pk=outsider.pk).update(prolific_study_id=prolific_id, prolific_status="UNPUBLISHED")
    outsider.refresh_from_db()
    before = len(prolific.calls)
    for action in (
        lambda: drafts.publish(study=outsider),
        lambda: drafts.add_places(study=outsider),
        lambda: drafts.send_draft(study=outsider, study_url="https://judge.example.org/s/outsider/"),
        lambda: reconcile_study(study=outsider),
    ):
        with pytest.raises(NotOurProlificStudy):
            action()
    assert prolific.calls[before:] == []  # not one request reached Prolific
    # Even marked as linked, the draft this deployment made for the victim stays the victim's.
    Study.objects.filter(pk=outsider.pk).update(prolific_link=Study.ProlificLink.PROVEN)
    outsider.refresh_from_db()
    with pytest.raises(NotOurProlificStudy, match="created by this deployment for another study"):
        owned_prolific_study(outsider)


def test_a_study_made_by_hand_on_prolific_is_linked_when_its_link_leads_to_this_study(prolific):
    study = make_study(slug="mine", **CODES)
    prolific.add_study("f" * 24, external_study_url="https://judge.example.org/s/mine/?PROLIFIC_PID={{%PROLIFIC_PID%}}")
    prolific.add_study("e" * 24, external_study_url="https://judge.example.org/s/somebody-else/")

    with pytest.raises(NotOurProlificStudy, match="set its study link on Prolific to this study's judging link"):
        link_prolific_study(study=study, prolific_id="e" * 24)
    with pytest.raises(NotOurProlificStudy, match="Prolific does not show the study"):
        link_prolific_study(study=study, prolific_id="d" * 24)
    with pytest.raises(NotOurProlificStudy, match="letters and digits only"):
        link_prolific_study(study=study, prolific_id="../studies/x")

    study = link_prolific_study(study=study, prolific_id="f" * 24)
    assert (study.prolific_study_id, study.prolific_link) == ("f" * 24, Study.ProlificLink.PROVEN)
    assert owned_prolific_study(study) == "f" * 24
    event = AuditEvent.objects.get(action=AuditEvent.Action.PROLIFIC_LINKED)
    assert event.details == {"before": "", "after": "f" * 24, "how": "proven"}


def test_once_live_the_link_never_changes(prolific):
    victim = victim_on_prolific(prolific)
    prolific.add_study("f" * 24, external_study_url="https://judge.example.org/s/victim/")
    for other in ("f" * 24, ""):
        with pytest.raises(NotOurProlificStudy, match="the link can no longer change"):
            link_prolific_study(study=victim, prolific_id=other)


def test_a_webhook_for_a_submission_of_another_prolific_study_is_not_credited(prolific):
    study = go_live(study=make_study(slug="mine", prolific_study_id="a" * 24, **CODES))
    # Entered with another study's STUDY_ID before this one was linked: its submission is not of this study.
    Participant.objects.create(study=study, prolific_pid="p" * 24, prolific_study_id="b" * 24, session_id="s" * 24)
    payload = {"event_type": "submission.status.change", "resource_id": "s" * 24, "status": "APPROVED"}
    assert receive_webhook_event(payload=payload).outcome == "unknown-submission"
    Participant.objects.create(study=study, prolific_pid="q" * 24, prolific_study_id="a" * 24, session_id="t" * 24)
    payload = {"event_type": "submission.status.change", "resource_id": "t" * 24, "status": "APPROVED"}
    assert receive_webhook_event(payload=payload).outcome == "recorded"
