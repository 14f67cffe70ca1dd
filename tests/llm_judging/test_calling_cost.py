"""What a judge call costs besides the provider: database queries, and how long a 429 keeps an item waiting."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from llm_collect.calls import TryAgain
from llm_judging.models import JudgeCall
from llm_judging.services.calling import judge_item
from llm_judging.services.runs import start_judging_run
from tests.fakes.llm_servers import FakeLLMServer

from .conftest import make_judge

pytestmark = pytest.mark.django_db


def test_a_judge_call_takes_a_handful_of_queries_whatever_the_prompt_needs(judged_study, fake):
    start_judging_run(study=judged_study, judges=[make_judge(fake.url, study=judged_study)], orders="one")
    first, second = JudgeCall.objects.order_by("pk")[:2]
    judge_item(call_id=first.pk)  # first use: settings, templates
    with CaptureQueriesContext(connection) as queries:
        assert judge_item(call_id=second.pk) == "done"
    # The call with its cell, vignette and answers; the claim; what the claim changed; the questions; each
    # answer's features; the stored picks. Lazily loaded answers made it 13.
    assert len(queries) <= 7


def test_starting_a_run_costs_the_same_queries_for_one_sample_or_three(judged_study, fake):
    judge = make_judge(fake.url, study=judged_study)
    with CaptureQueriesContext(connection) as one:
        start_judging_run(study=judged_study, judges=[judge], samples=1)
    with CaptureQueriesContext(connection) as three:
        run = start_judging_run(study=judged_study, judges=[judge], samples=3)
    assert run.planned == 9 * 2 * 3  # the first sample's rows still pending, queued again with the new ones
    assert JudgeCall.objects.count() == 9 * 2 * 3
    assert len(three) <= len(one) + 2  # not two per row, as get_or_create took


def test_a_429_that_says_when_is_tried_again_then_without_exponential_backoff(judged_study):
    with FakeLLMServer(script=[{"status": 429, "retry_after": 1}]) as server:
        start_judging_run(study=judged_study, judges=[make_judge(server.url, study=judged_study)], orders="one")
        call = JudgeCall.objects.order_by("pk").first()
        with pytest.raises(TryAgain) as caught:
            judge_item(call_id=call.pk, retries=3)  # backoff would wait 8 to 16 s by now
        assert 1 <= caught.value.delay <= 1.5
        assert judge_item(call_id=call.pk) == "done"
        assert len(server.requests) == 2


def test_a_server_error_still_backs_off(judged_study):
    with FakeLLMServer(script=[{"status": 503}]) as server:
        start_judging_run(study=judged_study, judges=[make_judge(server.url, study=judged_study)], orders="one")
        call = JudgeCall.objects.order_by("pk").first()
        with pytest.raises(TryAgain) as caught:
            judge_item(call_id=call.pk, retries=3)
        assert caught.value.delay >= 8
