"""Paid runs in the audit trail: who started an LLM collection or an LLM judging run, of what size."""

import pytest
from django.contrib.auth import get_user_model

from llm_collect.services import start_collection
from llm_judging.services.runs import start_judging_run
from surveys.models import AuditEvent
from tests.llm_collect.conftest import make_llm_study

from .conftest import make_judge

pytestmark = pytest.mark.django_db


def test_starting_a_judging_run_or_a_collection_records_who_paid_for_how_many_calls(judged_study, fake):
    ada = get_user_model().objects.create_user("ada", password="pw-for-tests-1", is_staff=True)
    judging = start_judging_run(
        study=judged_study, judges=[make_judge(fake.url, "openai", study=judged_study)], user=ada
    )
    collection = start_collection(study=make_llm_study(url=fake.url), samples=2, user=ada)
    events = {e.action: e for e in AuditEvent.objects.filter(username="ada")}
    assert events[AuditEvent.Action.JUDGING_STARTED].details == {
        "run": judging.pk, "planned": 18, "judges": ["gpt-4o"], "samples": 1,
    }  # fmt: skip
    assert events[AuditEvent.Action.COLLECTION_STARTED].details == {
        "run": collection.pk, "planned": 4, "systems": ["m0"], "samples": 2,
    }  # fmt: skip
    assert events[AuditEvent.Action.JUDGING_STARTED].study == judged_study
