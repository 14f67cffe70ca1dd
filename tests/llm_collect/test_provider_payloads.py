"""The wire-format readers and the HTTP layer against replies and errors as the providers publish them
(tests/fixtures/llm/, sources in its README), not only against the project's own fake servers."""

import json
from pathlib import Path

import httpx
import pytest
import time_machine

from llm_collect import client
from llm_collect.providers import PROVIDERS, wire_format

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llm"


@pytest.fixture(autouse=True)
def provider_hosts(settings):
    """The recorded payloads are served as if from these hosts: the deployment allows them a key."""
    settings.LLM_ALLOWED_HOSTS = ["provider.test", "p.test"]


def recorded(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def served(name: str, provider: str, model: str = "m"):
    """client.complete against a transport that answers with the recorded payload."""
    payload = recorded(name)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(payload["status"], headers=payload["headers"], json=payload["body"])

    target = client.Target(
        provider=provider, model=model, base_url="https://provider.test", api_key_env="FAKE_LLM_API_KEY"
    )
    with client.build_client(transport=httpx.MockTransport(answer)) as http_client:
        return client.complete(target, system_prompt="S", user_prompt="U", http_client=http_client)


@pytest.mark.parametrize(
    ("name", "provider", "text", "tokens", "version", "finish"),
    [
        (
            "openai_chat_reply.json",
            "openai",
            "Hello! How can I assist you today?",
            (19, 10),
            "gpt-4o-2024-08-06",
            "stop",
        ),
        (
            "anthropic_messages_reply.json",
            "anthropic",
            "Hi! My name is Claude.",
            (2095, 503),
            "claude-3-7-sonnet-20250219",
            "end_turn",
        ),
        (
            "anthropic_messages_thinking_reply.json",
            "anthropic",
            "Yes, there are infinitely many prime numbers such that...",
            (48, 1302),
            "claude-3-7-sonnet-20250219",
            "end_turn",
        ),
        (
            "gemini_generate_reply.json",
            "gemini",
            "AI, or artificial intelligence, works by learning patterns from data.",
            (8, 13),
            "gemini-2.0-flash",
            "STOP",
        ),
        (
            "gemini_generate_thinking_reply.json",
            "gemini",
            "AI learns patterns from examples and uses them to make predictions.",
            (10, 14 + 1036),  # thinking is billed as output
            "gemini-2.5-flash",
            "STOP",
        ),
        (
            "ollama_openai_compatible_reply.json",
            "openai-compatible",
            "Hello! How are you today?",
            (29, 8),
            "llama3.2",
            "stop",
        ),
        (
            "together_openai_compatible_reply.json",
            "openai-compatible",
            "man bites dog.",
            (20, 5),
            "mistralai/Mixtral-8x7B-Instruct-v0.1",
            "eos",
        ),
        (
            "deepseek_reasoner_reply.json",
            "openai-compatible",
            "9.11 is less than 9.8.",
            (16, 412),
            "deepseek-reasoner",
            "stop",
        ),
    ],
)
def test_a_published_reply_gives_its_text_usage_version_and_finish_reason(
    name, provider, text, tokens, version, finish
):
    reply = served(name, provider)
    assert reply.text == text
    assert (reply.input_tokens, reply.output_tokens) == tokens
    assert (reply.model_version, reply.finish_reason) == (version, finish)
    assert reply.raw == recorded(name)["body"]  # kept whole, to be read again later


@pytest.mark.parametrize(
    ("name", "provider", "retry_after"),
    [
        ("openai_chat_429.json", "openai", 0.12),
        ("openai_chat_500.json", "openai", None),
        ("anthropic_messages_429.json", "anthropic", 20.0),
        ("anthropic_messages_529.json", "anthropic", None),
        ("gemini_generate_429.json", "gemini", None),
        ("gemini_generate_503.json", "gemini", None),
    ],
)
def test_published_rate_limit_and_overload_errors_are_retryable_with_their_wait(name, provider, retry_after):
    with pytest.raises(client.Retryable) as caught:
        served(name, provider)
    assert caught.value.status == recorded(name)["status"]
    assert caught.value.retry_after == retry_after
    assert json.loads(caught.value.body) == recorded(name)["body"]


@pytest.mark.parametrize(
    ("name", "provider"),
    [("openai_chat_400_bad_schema.json", "openai"), ("gemini_generate_400_bad_key.json", "gemini")],
)
def test_published_request_errors_are_permanent(name, provider):
    with pytest.raises(client.Permanent, match="HTTP 400") as caught:
        served(name, provider)
    assert caught.value.status == 400


def test_every_registered_provider_has_a_recorded_reply():
    files = {path.name for path in FIXTURES.glob("*_reply.json")}
    prefixes = {"openai": "openai_chat", "anthropic": "anthropic_messages", "gemini": "gemini_generate"}
    for provider in PROVIDERS:
        prefix = prefixes.get(provider, "openai_compatible")
        assert any(prefix in name for name in files), provider


def test_a_stored_raw_reply_can_be_read_again_without_a_call():
    body = recorded("gemini_generate_thinking_reply.json")["body"]
    reply = client.read_reply("gemini", body)
    assert reply.output_tokens == wire_format("gemini").read(body).output_tokens == 1050


def test_a_reply_of_an_unexpected_shape_is_retryable():
    def answer(request):
        return httpx.Response(200, json={"choices": "not a list"})

    target = client.Target(provider="openai", model="gpt-4o", base_url="https://p.test", api_key_env="FAKE_LLM_API_KEY")
    with (
        client.build_client(transport=httpx.MockTransport(answer)) as http_client,
        pytest.raises(client.Retryable, match="Unexpected response shape"),
    ):
        client.complete(target, system_prompt="S", user_prompt="U", http_client=http_client)


def test_an_unknown_provider_is_permanent():
    with pytest.raises(client.Permanent, match="Unknown provider"):
        client.complete(client.Target(provider="cohere", model="x"), system_prompt="S", user_prompt="U")


@pytest.mark.parametrize(
    ("name", "provider", "outcome", "reason"),
    [
        ("openai_chat_refusal_reply.json", "openai", "refused", "I'm sorry, I cannot assist with that request."),
        ("openai_chat_length_reply.json", "openai", "length", "finish_reason: length"),
        ("openai_chat_content_filter_reply.json", "openai", "blocked", "finish_reason: content_filter"),
        ("anthropic_messages_refusal_reply.json", "anthropic", "refused", "stop_reason: refusal. I can't help with that."),
        ("anthropic_messages_max_tokens_reply.json", "anthropic", "length", "stop_reason: max_tokens"),
        ("gemini_generate_safety_reply.json", "gemini", "blocked",
         "finishReason: SAFETY; rated: HARM_CATEGORY_HARASSMENT MEDIUM"),
        ("gemini_generate_block_reason_reply.json", "gemini", "blocked",
         "promptFeedback.blockReason: SAFETY; rated: HARM_CATEGORY_DANGEROUS_CONTENT HIGH"),
        ("gemini_generate_max_tokens_reply.json", "gemini", "length", "finishReason: MAX_TOKENS"),
    ],
)  # fmt: skip
def test_a_published_refusal_cut_or_block_is_read_as_that_outcome_with_the_providers_reason(
    name, provider, outcome, reason
):
    reply = served(name, provider)
    assert (reply.outcome, reply.outcome_reason) == (outcome, reason)


def test_a_published_tool_use_reply_gives_the_tools_input_not_the_commentary_beside_it():
    reply = served("anthropic_messages_tool_use_reply.json", "anthropic")
    assert json.loads(reply.text) == {"features": {"choice": "A", "reason": "Names more of what matters."}}
    assert reply.outcome == ""


@time_machine.travel("2026-12-01T12:00:00Z", tick=False)
@pytest.mark.parametrize(
    ("name", "provider", "wait"),
    [
        ("gemini_generate_429_retry_info.json", "gemini", 37.0),  # in the body: RetryInfo.retryDelay
        ("openai_chat_429_reset_headers.json", "openai", 0.12),  # the bucket that ran out: requests, 120ms
        ("anthropic_messages_429_reset_headers.json", "anthropic", 30.0),  # requests-remaining 0, reset at :30
    ],
)
def test_a_published_429_without_retry_after_waits_as_its_body_or_reset_headers_say(name, provider, wait):
    with pytest.raises(client.Retryable) as caught:
        served(name, provider)
    assert caught.value.retry_after == pytest.approx(wait)


def test_a_published_429_that_says_not_to_retry_is_permanent():
    with pytest.raises(client.Permanent, match="x-should-retry: false"):
        served("openai_chat_429_should_retry_false.json", "openai")
