"""Every action that spends money or changes what a participant is paid or counted as writes an audit event (issue 35).

The admin's actions are enumerated: each is either audited (with the event it writes, asserted by a test) or says why
it needs no event. A new action fails here until it is classified."""

import re
from pathlib import Path

import pytest
from django.contrib import admin
from django.urls import reverse

from surveys.models import AuditEvent, Participant
from surveys.services.allocation import allocate
from tests.conftest import make_judged_study

Action = AuditEvent.Action
TESTS = Path(__file__).resolve().parent.parent
BEHAVIOUR = "# -- what each writes, asserted --"

# (model label, admin action) -> the audit event it writes (itself, or the page it leads to when confirmed).
AUDITED = {
    ("surveys.Study", "make_live"): Action.WENT_LIVE,  # the cells every judgment is counted in
    ("surveys.Study", "make_closed"): Action.CLOSED,
    ("surveys.Study", "review_on_prolific"): Action.PROLIFIC_REVIEWED,  # approve (pay), reject, ask to return
    ("surveys.Study", "publish_on_prolific"): Action.PROLIFIC_PUBLISHED,  # places paid from the balance
    ("surveys.Study", "add_places_on_prolific"): Action.PROLIFIC_PLACES_ADDED,
    ("surveys.Study", "pay_bonuses_on_prolific"): Action.PROLIFIC_BONUSES_PAID,
    ("surveys.Participant", "pay_bonus_to_participants"): Action.PROLIFIC_BONUSES_PAID,
    ("surveys.Participant", "exclude_by_researcher"): Action.PARTICIPANT_EXCLUDED,  # judgments no longer counted
    ("surveys.Respondent", "ask_to_return"): Action.WRITERS_ASKED_TO_RETURN,  # a returned submission is unpaid
    ("surveys.Study", "create_or_update_prolific_draft"): Action.PROLIFIC_DRAFT_CREATED,  # which study owns it
    ("llm_collect.Generation", "retry"): Action.COLLECTION_RETRIED,  # "Ask again": paid calls
}
# Paid work started from pages rather than actions: the LLM runs.
AUDITED_PAGES = {Action.COLLECTION_STARTED, Action.JUDGING_STARTED}
NOT_AUDITED = {
    ("surveys.Study", "copy_as_new_draft"): "a new draft: nothing paid, nobody counted",
    ("surveys.Study", "reconcile_with_prolific"): "applies what Prolific says (as every 10 minutes); each status is on "
    "the participant with its time",
    ("surveys.Study", "remove_test_participants"): "the researchers' own tries: never paid, never counted",
    ("surveys.Invitation", "revoke"): "experts are not paid; an invitation counts nothing",
    ("surveys.Invitation", "revoke_and_reissue"): "experts are not paid; an invitation counts nothing",
    ("axes.AccessAttempt", "cleanup_expired_attempts"): "sign-in attempts",
    ("django_celery_beat.PeriodicTask", "enable_tasks"): "the operator's schedule",
    ("django_celery_beat.PeriodicTask", "disable_tasks"): "the operator's schedule",
    ("django_celery_beat.PeriodicTask", "toggle_tasks"): "the operator's schedule",
    ("django_celery_beat.PeriodicTask", "run_tasks"): "the operator's schedule",
}


def admin_actions() -> set[tuple[str, str]]:
    found = set()
    for model, model_admin in admin.site._registry.items():
        for action in model_admin.actions or []:
            found.add((model._meta.label, action if isinstance(action, str) else action.__name__))
    return found


def test_every_admin_action_is_audited_or_says_why_not():
    actions = admin_actions()
    assert sorted(actions - set(AUDITED) - set(NOT_AUDITED)) == [], "classify the new action here"
    assert sorted((set(AUDITED) | set(NOT_AUDITED)) - actions) == [], "an action listed here no longer exists"


@pytest.mark.parametrize("action", sorted(set(AUDITED.values()) | AUDITED_PAGES))
def test_each_audit_event_of_money_or_counting_is_asserted_by_a_test(action):
    name = Action(action).name
    asserting = [
        path.relative_to(TESTS).as_posix()
        for path in TESTS.rglob("test_*.py")
        if re.search(rf"Action\.{name}\b", _asserting_part(path))
    ]
    assert asserting, f"no test asserts that AuditEvent.Action.{name} is written"


def _asserting_part(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text.split(BEHAVIOUR)[-1] if path.resolve() == Path(__file__).resolve() else text


# -- what each writes, asserted --
@pytest.mark.django_db
def test_excluding_participants_in_the_admin_is_audited_with_who(client, admin_user):
    """Issue 35: excluding a participant left no audit event."""
    study = make_judged_study(slug="excl", participants=0)
    people = [Participant.objects.create(study=study, prolific_pid=f"pid{n}", session_id=f"sub{n}") for n in (1, 2)]
    for person in people:
        allocate(participant=person)
    client.force_login(admin_user)
    data = {"action": "exclude_by_researcher", "_selected_action": [p.pk for p in people]}
    client.post(reverse("admin:surveys_participant_changelist"), data)
    event = AuditEvent.objects.get(action=Action.PARTICIPANT_EXCLUDED)
    assert (event.user, event.study, sorted(event.details["participants"])) == (admin_user, study, ["pid1", "pid2"])
    assert set(Participant.objects.values_list("exclusion", flat=True)) == {Participant.Exclusion.RESEARCHER}


@pytest.mark.django_db
def test_publishing_and_creating_a_draft_on_prolific_are_audited(prolific, admin_user):
    from surveys.prolific import drafts
    from surveys.services.lifecycle import go_live
    from tests.conftest import make_study

    study = go_live(study=make_study(slug="pub", completion_code="DONE1", description="Compare."))
    sent = drafts.send_draft(study=study, study_url="https://judge.example.org/s/pub/", by=admin_user)
    study.refresh_from_db()
    drafts.publish(study=study, by=admin_user)
    created = AuditEvent.objects.get(action=Action.PROLIFIC_DRAFT_CREATED)
    published = AuditEvent.objects.get(action=Action.PROLIFIC_PUBLISHED)
    assert created.details == {"prolific_study_id": sent.prolific_id}
    assert (published.user, published.details["prolific_study_id"]) == (admin_user, sent.prolific_id)
