"""Judging over the four wire formats, against a real HTTP server on 127.0.0.1 (tests/fakes/llm_servers.py)."""

import json

import pytest

from llm_collect.calls import TryAgain
from llm_judging.models import JudgeCall
from llm_judging.services.calling import judge_item
from llm_judging.services.runs import start_judging_run
from tests.conftest import QUESTION_KEYS
from tests.fakes.llm_servers import FakeLLMServer

from .conftest import make_judge

pytestmark = pytest.mark.django_db  # on_commit never fires: tests run each task themselves
ALL_B = json.dumps({key: {"choice": "B", "reason": ""} for key in QUESTION_KEYS})


def one_call(study, server, provider) -> JudgeCall:
    judge = make_judge(server.url, provider, study=study)
    start_judging_run(study=study, judges=[judge], orders="one")
    return JudgeCall.objects.filter(judge=judge).first()


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini", "openai-compatible"])
def test_each_wire_format_sends_the_schema_its_own_way_and_reads_the_picks(judged_study, provider):
    with FakeLLMServer(judge=lambda keys, prompt: {k: {"choice": "B", "reason": "r"} for k in keys}) as server:
        call = one_call(judged_study, server, provider)
        assert judge_item(call_id=call.pk) == "done"
        body = server.requests[0][2]
    call.refresh_from_db()
    assert call.picks == {key: "B" for key in QUESTION_KEYS}
    assert call.winner_id(QUESTION_KEYS[0]) == call.second_answer_id
    if provider == "openai":
        assert body["response_format"]["json_schema"]["schema"]["required"] == QUESTION_KEYS
    elif provider == "anthropic":
        assert body["tool_choice"] == {"type": "tool", "name": "judgment"}
        assert body["tools"][0]["input_schema"]["required"] == QUESTION_KEYS
        assert call.raw_response["content"][0]["type"] == "tool_use"
    elif provider == "gemini":
        schema = body["generationConfig"]["responseSchema"]
        assert schema["type"] == "OBJECT"
        assert "additionalProperties" not in schema
        assert schema["properties"][QUESTION_KEYS[0]]["properties"]["choice"]["enum"] == ["A", "B"]
    else:
        assert body["response_format"] == {"type": "json_object"}  # no strict schema there: asked in words


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_reply_outside_the_schema_is_asked_again_then_flagged(judged_study, provider):
    outside = {"text": json.dumps({"verdict": "A is better"})}
    with FakeLLMServer(script=[outside] * 3) as server:
        call = one_call(judged_study, server, provider)
        for _ in range(2):
            with pytest.raises(TryAgain):
                judge_item(call_id=call.pk)
        assert judge_item(call_id=call.pk) == "invalid"
        assert judge_item(call_id=call.pk) == "skipped"
        assert len(server.requests) == 3
    call.refresh_from_db()
    assert call.status == "invalid"
    assert call.picks == {}
    assert "no pick A or B for: features" in call.parse_error
    assert [e["outcome"] for e in call.history] == ["invalid output"] * 3
    assert call.input_tokens == 3 * 400  # every paid call counted


def test_a_reply_that_answers_only_some_questions_is_asked_again_and_the_full_one_kept(judged_study):
    partial = {"text": json.dumps({QUESTION_KEYS[0]: {"choice": "A", "reason": ""}})}
    with FakeLLMServer(script=[partial, {"text": ALL_B}]) as server:
        call = one_call(judged_study, server, "gemini")
        with pytest.raises(TryAgain):
            judge_item(call_id=call.pk)
        assert judge_item(call_id=call.pk) == "done"
    call.refresh_from_db()
    assert call.picks == {key: "B" for key in QUESTION_KEYS}
    assert "weighting" in call.history[0]["error"]


def test_a_bare_choice_and_a_fenced_block_are_read_too(judged_study):
    bare = "```json\n" + json.dumps({key: "a" for key in QUESTION_KEYS}) + "\n```"
    with FakeLLMServer(script=[{"text": bare}]) as server:
        call = one_call(judged_study, server, "openai-compatible")
        assert judge_item(call_id=call.pk) == "done"
    call.refresh_from_db()
    assert set(call.picks.values()) == {"A"}


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini", "openai-compatible"])
def test_a_429_waits_for_retry_after_then_succeeds_paying_once_for_the_picks(judged_study, provider):
    with FakeLLMServer(script=[{"status": 429, "retry_after": 2}]) as server:
        call = one_call(judged_study, server, provider)
        with pytest.raises(TryAgain) as caught:
            judge_item(call_id=call.pk)
        assert caught.value.delay >= 2
        assert judge_item(call_id=call.pk) == "done"
        assert len(server.requests) == 2
    call.refresh_from_db()
    assert [e["outcome"] for e in call.history] == ["retryable error", "judged"]


def test_a_permanent_error_fails_the_item_without_retrying(judged_study):
    with FakeLLMServer(script=[{"status": 400}]) as server:
        call = one_call(judged_study, server, "openai")
        assert judge_item(call_id=call.pk) == "failed"
        assert judge_item(call_id=call.pk) == "skipped"
        assert len(server.requests) == 1
