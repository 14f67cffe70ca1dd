"""LLM judging runs end to end against a fake provider on 127.0.0.1: prompts, picks, exactly-once."""

import json

import pytest
from django.core.management import call_command

from llm_collect.calls import TryAgain
from llm_judging.models import JudgeCall
from llm_judging.services.calling import judge_item
from llm_judging.services.runs import start_judging_run
from surveys.models import Judgment
from tests.conftest import QUESTION_KEYS

from .conftest import make_judge

pytestmark = pytest.mark.django_db  # on_commit never fires: tests run each task themselves


def run_all(ids, *, rounds=6):
    """Each call's task, again while it asks to be tried again (as the Celery task would)."""
    for _ in range(rounds):
        pending = []
        for call_id in ids:
            try:
                judge_item(call_id=call_id)
            except TryAgain:
                pending.append(call_id)
        ids = pending
        if not ids:
            return


def test_a_run_judges_every_cell_in_both_orders_and_stores_the_picks_apart(judged_study, fake):
    judge = make_judge(fake.url, "openai", study=judged_study)
    humans_before = Judgment.objects.count()
    run = start_judging_run(study=judged_study, judges=[judge])
    assert run.planned == 9 * 2
    run_all(list(JudgeCall.objects.values_list("pk", flat=True)))
    calls = JudgeCall.objects.all()
    assert {c.status for c in calls} == {"done"}
    assert len(fake.requests) == 18
    assert {c.order for c in calls} == {"ab", "ba"}
    for call in calls:
        assert call.picks == {key: "A" for key in QUESTION_KEYS}
        assert call.raw_request["response_format"]["json_schema"]["strict"] is True
        assert call.input_tokens == 400
        assert call.cost_estimate > 0
        assert call.latency_ms is not None
    assert Judgment.objects.count() == humans_before  # never mixed into the human judgments


def test_the_prompt_shows_the_vignette_both_answers_and_the_questions_as_a_judge_sees_them(judged_study, fake):
    judge = make_judge(fake.url, "openai", study=judged_study)
    start_judging_run(study=judged_study, judges=[judge], orders="one")
    call = JudgeCall.objects.select_related("first_answer", "cell__vignette").first()
    judge_item(call_id=call.pk)
    user = fake.requests[0][2]["messages"][1]["content"]
    assert call.cell.vignette.text in user
    assert user.index("ANSWER A") < user.index(call.first_answer.action) < user.index("ANSWER B")
    assert "1. honesty | 60 | it matters" in user
    for key in QUESTION_KEYS:
        assert f"- {key}: Which answer is better on {key}?" in user
    schema = fake.requests[0][2]["response_format"]["json_schema"]["schema"]
    assert schema["required"] == QUESTION_KEYS
    assert schema["additionalProperties"] is False


def test_running_a_finished_item_again_calls_nobody_and_a_second_run_queues_nothing(judged_study, fake):
    judge = make_judge(fake.url, "openai", study=judged_study)
    start_judging_run(study=judged_study, judges=[judge], orders="one")
    ids = list(JudgeCall.objects.values_list("pk", flat=True))
    run_all(ids)
    run_all(ids)
    assert len(fake.requests) == 9
    again = start_judging_run(study=judged_study, judges=[judge], orders="both")
    assert again.already_present == 9
    assert again.planned == 9
    assert JudgeCall.objects.count() == 18


def test_the_command_copies_a_judge_from_the_studys_system_and_queues_a_run(judged_study, fake, capsys):
    judged_study.systems.filter(key="beta").update(
        kind="llm", provider="openai", model="gpt-4o", base_url=fake.url, api_key_env="FAKE_LLM_API_KEY"
    )
    call_command("judge_with_llm", "judged", "--judges", "gpt-4o", "--samples", "2", "--orders", "one")
    assert "18 calls queued" in capsys.readouterr().out
    assert JudgeCall.objects.filter(judge__key="gpt-4o", judge__model="gpt-4o").count() == 18


def test_unknown_judges_and_missing_keys_are_refused_before_anything_is_queued(judged_study, fake, monkeypatch):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="has no judge model 'nope'"):
        call_command("judge_with_llm", "judged", "--judges", "nope")
    make_judge(fake.url, "openai", study=judged_study)
    monkeypatch.delenv("FAKE_LLM_API_KEY")
    with pytest.raises(CommandError, match="FAKE_LLM_API_KEY"):
        call_command("judge_with_llm", "judged", "--judges", "gpt-4o")
    assert JudgeCall.objects.count() == 0


def test_reply_text_is_kept_verbatim(judged_study, fake):
    judge = make_judge(fake.url, "openai", study=judged_study)
    start_judging_run(study=judged_study, judges=[judge], orders="one")
    call = JudgeCall.objects.first()
    judge_item(call_id=call.pk)
    call.refresh_from_db()
    assert json.loads(call.raw_text)[QUESTION_KEYS[0]]["reason"] == "clearer"
    assert call.reasons[QUESTION_KEYS[0]] == "clearer"
