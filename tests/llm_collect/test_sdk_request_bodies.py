"""Every request body the project builds, for every model family and the settings researchers give, is a valid
request of the official SDK's own types (openai, anthropic, google-genai; tests/llm_collect/sdk_types.py) and is
not one the real API refuses (tests/fakes/wire_rules.py). Nothing is sent anywhere."""

import itertools

import pytest

from llm_collect import client
from llm_collect.providers import OutputSchema, Prompt, wire_format
from llm_judging.services.prompts import judgment_schema
from tests.conftest import QUESTION_KEYS
from tests.fakes import wire_rules

from . import sdk_types

pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("google.genai")

SAFETY = [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"}]
MODELS = {
    "openai": ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5-chat-latest", "o1",
               "o1-mini", "o3", "o3-mini", "o4-mini"],
    "openai-compatible": ["deepseek-chat", "deepseek-reasoner", "meta-llama/Llama-3.3-70B-Instruct-Turbo"],
    "anthropic": ["claude-3-5-haiku-20241022", "claude-3-7-sonnet-20250219", "claude-sonnet-4-5", "claude-opus-4-1",
                  "claude-haiku-4-5"],
    "gemini": ["gemini-1.5-flash", "gemini-2.0-flash", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.5-pro",
               "gemini-3-pro-preview"],
}  # fmt: skip
PARAMETERS = {
    "openai": [{}, {"temperature": 0.7, "top_p": 0.9, "max_tokens": 2000, "presence_penalty": 0.1},
               {"reasoning_effort": "low", "max_completion_tokens": 4000, "seed": 7}],
    "openai-compatible": [{}, {"temperature": 0.2, "max_tokens": 1500}, {"response_format": None}],
    "anthropic": [{}, {"temperature": 0.5, "max_tokens": 2000, "top_k": 5},
                  {"thinking": {"type": "enabled", "budget_tokens": 500}, "temperature": 1, "top_p": 0.5},
                  {"thinking": {"type": "enabled", "budget_tokens": 8000}, "max_tokens": 4000}],
    "gemini": [{}, {"temperature": 0.5, "max_tokens": 2000, "topK": 40},
               {"generationConfig": {"thinkingConfig": {"thinkingBudget": 0}}},
               {"thinkingConfig": {"thinkingBudget": 50000}, "safetySettings": SAFETY}],
}  # fmt: skip
PROMPTS = {
    "answer": Prompt(system="S", user="U"),
    "judgment": Prompt(system="S", user="U", schema=judgment_schema(QUESTION_KEYS)),
    "other schema": Prompt(system="S", user="U", schema=OutputSchema("x", {"type": "object", "properties": {}})),
}
CASES = [
    (provider, model, n, prompt, budget)
    for provider, models in MODELS.items()
    for model, (n, _), prompt, budget in itertools.product(
        models, enumerate(PARAMETERS[provider]), PROMPTS, [None, 8000]
    )
]


def body_of(provider, model, n, prompt, budget) -> dict:
    target = client.Target(provider=provider, model=model, base_url="https://api.test", parameters=PARAMETERS[provider][n],
                           max_output_tokens=budget)  # fmt: skip
    return wire_format(provider).request(target, PROMPTS[prompt]).body


@pytest.mark.parametrize(("provider", "model", "n", "prompt", "budget"), CASES)
def test_every_request_body_is_the_sdks_own_request_type_and_one_the_api_takes(provider, model, n, prompt, budget):
    body = body_of(provider, model, n, prompt, budget)
    if provider == "gemini":
        sdk_types.gemini_adapter().validate_python(body)
        assert wire_rules.gemini_refusal(model, body) is None
    elif provider == "anthropic":
        assert sdk_types.validate(body, sdk_types.anthropic_params()) == []
        assert wire_rules.anthropic_refusal(body) is None
    else:
        assert sdk_types.validate(body, sdk_types.openai_params()) == []
        if provider == "openai":
            assert wire_rules.openai_refusal(body) is None


def test_the_checks_catch_the_bodies_the_issue_found():
    """The oracles are not blind: the bodies the project used to build fail them."""
    gpt5 = {"model": "gpt-5-mini", "messages": [{"role": "user", "content": "U"}], "max_tokens": 10, "temperature": 1}
    assert "max_tokens" in wire_rules.openai_refusal(gpt5)
    gemini = {"contents": [{"role": "user", "parts": [{"text": "U"}]}], "generationConfig": {"safetySettings": SAFETY}}
    with pytest.raises(ValueError, match="safetySettings"):
        sdk_types.gemini_request_model().model_validate(gemini)
    thinking = {"model": "claude-sonnet-4-5", "max_tokens": 4096, "messages": [{"role": "user", "content": "U"}],
                "thinking": {"type": "enabled", "budget_tokens": 2048}, "tool_choice": {"type": "tool", "name": "j"},
                "tools": [{"name": "j", "input_schema": {"type": "object"}}]}  # fmt: skip
    assert "forces tool use" in wire_rules.anthropic_refusal(thinking)
    extra = {"model": "gpt-4o", "messages": [{"role": "user", "content": "U", "nmae": "x"}], "requests_per_minute": 5}
    assert len(sdk_types.validate(extra, sdk_types.openai_params())) == 2
    assert sdk_types.validate({**thinking, "thinking": {"type": "enabled", "budget": 5}}, sdk_types.anthropic_params())


def test_the_cases_cover_every_provider_and_family():
    assert {provider for provider, *_ in CASES} == set(MODELS)
    assert len(CASES) >= 300
