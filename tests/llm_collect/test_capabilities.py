"""Model capabilities as data: a family is found by its name's longest prefix, a System may say what its model
takes, and what a model does not take is changed or dropped with a note, never sent."""

import pytest
from django.urls import reverse

from llm_collect import client
from llm_collect.providers import Prompt, wire_format
from surveys.llm_capabilities import capabilities_for

from .conftest import make_llm_study


@pytest.mark.parametrize(
    ("provider", "model", "family", "sampling", "budget", "role"),
    [
        ("openai", "gpt-4o", "OpenAI chat model", True, "max_tokens", "system"),
        ("openai", "gpt-5-mini", "OpenAI reasoning model", False, "max_completion_tokens", "developer"),
        ("openai", "gpt-5-chat-latest", "OpenAI chat model", True, "max_tokens", "system"),
        ("openai", "o3", "OpenAI reasoning model", False, "max_completion_tokens", "developer"),
        ("openai", "o4-mini", "OpenAI reasoning model", False, "max_completion_tokens", "developer"),
        ("openai", "o1-mini", "OpenAI early reasoning model", False, "max_completion_tokens", "user"),
        ("openai-compatible", "o3", "OpenAI-compatible endpoint", True, "max_tokens", "system"),
        ("anthropic", "claude-sonnet-4-5", "Anthropic model with extended thinking", False, "max_tokens", "system"),
        ("gemini", "gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", True, "maxOutputTokens", "system"),
        ("gemini", "models/gemini-2.5-pro", "Gemini 2.5 Pro", True, "maxOutputTokens", "system"),
    ],
)
def test_a_model_is_known_by_its_familys_longest_prefix(provider, model, family, sampling, budget, role):
    caps = capabilities_for(provider, model)
    assert (caps.family, caps.sampling, caps.budget_field, caps.system_role) == (family, sampling, budget, role)


def test_a_system_says_what_an_unknown_model_takes(fake):
    own = {"sampling": False, "budget_field": "max_completion_tokens", "system_role": "developer"}
    target = client.Target(provider="openai", model="gpt-6-preview", base_url=fake.url,
                           parameters={"capabilities": own, "temperature": 0.3, "max_tokens": 900})  # fmt: skip
    request = wire_format("openai").request(target, Prompt(system="S", user="U"))
    assert "temperature" not in request.body
    assert "capabilities" not in request.body
    assert request.body["max_completion_tokens"] == 900
    assert request.body["messages"][0]["role"] == "developer"
    assert request.notes == (
        "temperature not sent: gpt-6-preview (OpenAI chat model) does not accept it.",
        "max_tokens sent as max_completion_tokens, the name gpt-6-preview (OpenAI chat model) takes.",
    )


@pytest.mark.parametrize(
    ("model", "budget", "sent", "note"),
    [
        ("gemini-2.5-flash", 30000, 24576, "thinkingBudget 30000 sent as 24576"),
        ("gemini-2.5-pro", 0, 128, "thinkingBudget 0 sent as 128"),  # Pro cannot switch thinking off
        ("gemini-2.5-flash", 0, 0, None),
        ("gemini-2.5-flash", -1, -1, None),  # the model decides
    ],
)
def test_a_gemini_thinking_budget_is_brought_into_the_familys_range(model, budget, sent, note):
    params = {"generationConfig": {"thinkingConfig": {"thinkingBudget": budget}}}
    target = client.Target(provider="gemini", model=model, parameters=params)
    request = wire_format("gemini").request(target, Prompt(system="S", user="U"))
    assert request.body["generationConfig"]["thinkingConfig"]["thinkingBudget"] == sent
    said = [n for n in request.notes if "thinkingBudget" in n]
    if note:
        assert len(said) == 1
        assert said[0].startswith(f"{note}: {model} (")
    else:
        assert said == []


def test_thinking_for_a_model_without_it_is_not_sent():
    target = client.Target(
        provider="gemini", model="gemini-2.0-flash", parameters={"thinkingConfig": {"thinkingBudget": 99}}
    )
    request = wire_format("gemini").request(target, Prompt(system="S", user="U"))
    assert "thinkingConfig" not in request.body["generationConfig"]
    assert request.notes == ("thinkingConfig not sent: gemini-2.0-flash (Gemini model) has no thinking budget.",)


def test_anthropic_thinking_gets_a_budget_the_api_takes_and_judges_with_the_tool_offered():
    from llm_judging.services.prompts import judgment_schema

    params = {"thinking": {"type": "enabled", "budget_tokens": 500}, "max_tokens": 800}
    target = client.Target(provider="anthropic", model="claude-sonnet-4-5", parameters=params)
    request = wire_format("anthropic").request(target, Prompt(system="S", user="U", schema=judgment_schema(["q"])))
    assert request.body["thinking"]["budget_tokens"] == 1024
    assert request.body["max_tokens"] > 1024
    assert request.body["tool_choice"] == {"type": "auto"}
    assert "judgment tool" in request.body["system"]
    assert any("tool_choice auto" in note for note in request.notes)


@pytest.mark.django_db
def test_the_start_page_shows_what_is_changed_before_sending(fake, admin_client):
    study = make_llm_study(url=fake.url, providers=["openai"], parameters={"temperature": 0.5})
    study.systems.filter(kind="llm").update(model="o3")
    page = admin_client.get(reverse("admin:llm_collect_collectionrun_start") + f"?study={study.pk}").content.decode()
    assert "What is changed before sending" in page
    assert "temperature not sent: o3 (OpenAI reasoning model) does not accept it." in page
