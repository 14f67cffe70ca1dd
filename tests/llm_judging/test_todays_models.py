"""End to end, as a researcher does it: today's models named in a study file (gpt-5-mini, o3, claude-sonnet-4-5
with extended thinking, gemini-2.5-flash) give answers and then judgments, against a fake provider that refuses
what the real APIs refuse (tests/fakes/wire_rules.py). No model-specific setting is needed in the file: the
researcher's temperature and max_tokens are fitted to each model, with a note each time."""

import json

import pytest
from django.core.management import call_command

from llm_collect import services
from llm_collect.calls import TryAgain
from llm_collect.models import Generation
from llm_judging.models import JudgeCall
from llm_judging.services.calling import judge_item
from surveys.models import Answer, Study
from surveys.services.lifecycle import go_live
from tests.conftest import QUESTION_KEYS
from tests.fakes.llm_servers import FakeLLMServer

pytestmark = pytest.mark.django_db

TODAY = [
    ("gpt-5-mini", "openai", "OPENAI_API_KEY", {"temperature": 0.7, "max_tokens": 3000}),
    ("o3", "openai", "OPENAI_API_KEY", {"max_tokens": 3000, "top_p": 0.9}),
    ("claude-sonnet-4-5", "anthropic", "ANTHROPIC_API_KEY",
     {"temperature": 1, "thinking": {"type": "enabled", "budget_tokens": 2048}}),
    ("gemini-2.5-flash", "gemini", "GEMINI_API_KEY",
     {"temperature": 0.5, "generationConfig": {"thinkingConfig": {"thinkingBudget": 30000}},
      "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}]}),
]  # fmt: skip


def study_file(url: str) -> dict:
    human = {"features": [{"feature": "honesty", "weight": 100, "reason": "it matters"}], "action": "Tell."}
    return {
        "slug": "today",
        "name": "Today's models",
        "reference_system": "human",
        "design": {"repetitions": 1, "vignettes_per_participant": 2},
        "questions": [{"key": key, "text": f"Which is better on {key}?"} for key in QUESTION_KEYS],
        "systems": [{"key": "human", "label": "Lay human", "kind": "human"}]
        + [
            {
                "key": model,
                "label": model,
                "kind": "llm",
                "provider": provider,
                "model": model,
                "base_url": url,
                "api_key_env": variable,
                "parameters": parameters,
            }
            for model, provider, variable, parameters in TODAY
        ],
        "vignettes": [{"key": f"v{n}", "character": "Sam", "text": f"Story {n}."} for n in (1, 2)],
        "answers": [{"system": "human", "vignette": f"v{n}", **human, "selected": True} for n in (1, 2)],
    }


def run_until_settled(step, ids, rounds=6):
    for _ in range(rounds):
        waiting = []
        for pk in ids:
            try:
                step(pk)
            except TryAgain:
                waiting.append(pk)
        ids = waiting
    assert not ids, "some calls never settled"


def test_todays_models_answer_and_judge_from_a_study_file(tmp_path, monkeypatch, settings):
    settings.LLM_RATE_LIMITS = {"default": {"requests_per_minute": 60000, "burst": 100, "concurrency": 50}}
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(variable, "sk-test")
    with FakeLLMServer() as server:
        path = tmp_path / "today.study.json"
        path.write_text(json.dumps(study_file(server.url)))
        call_command("import_study", str(path))
        call_command("collect_answers", "today", "--samples", "1")
        gens = list(Generation.objects.values_list("pk", flat=True))
        run_until_settled(lambda pk: services.collect(generation_id=pk), gens)
        study = Study.objects.get(slug="today")
        assert {g.status for g in Generation.objects.all()} == {"done"}
        assert Answer.objects.for_study(study).filter(origin="llm", selected=True).count() == 4 * 2
        go_live(study=study)
        call_command("judge_with_llm", "today", "--judges", ",".join(m for m, *_ in TODAY), "--orders", "one")
        calls = list(JudgeCall.objects.values_list("pk", flat=True))
        run_until_settled(lambda pk: judge_item(call_id=pk), calls)
    assert server.refused == []  # nothing a real API would have refused was sent
    assert len(calls) == 4 * study.cells.count()
    for call in JudgeCall.objects.select_related("judge"):
        assert call.status == "done", (call.judge.key, call.error)
        assert set(call.picks) == set(QUESTION_KEYS)
    notes = {gen.system.key: gen.history[-1].get("notes", []) for gen in Generation.objects.select_related("system")}
    assert "temperature not sent: gpt-5-mini (OpenAI reasoning model) does not accept it." in notes["gpt-5-mini"]
    assert any("max_tokens sent as max_completion_tokens" in note for note in notes["o3"])
    assert any(note.startswith("temperature not sent") for note in notes["claude-sonnet-4-5"])
    assert any("thinkingBudget 30000 sent as 24576" in note for note in notes["gemini-2.5-flash"])
    claude = JudgeCall.objects.filter(judge__key="claude-sonnet-4-5").first()
    assert claude.raw_request["tool_choice"] == {"type": "auto"}  # thinking kept; the forced tool is refused
    assert claude.raw_response["content"][0]["type"] == "thinking"
    gemini = Generation.objects.get(system__key="gemini-2.5-flash", vignette__key="v1")
    assert gemini.raw_request["safetySettings"][0]["threshold"] == "BLOCK_ONLY_HIGH"  # top level, not in config
    assert "safetySettings" not in gemini.raw_request["generationConfig"]
