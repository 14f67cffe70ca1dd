"""The provider clients against a real HTTP server on 127.0.0.1 speaking each wire format."""

import json

import pytest

from llm_collect import client
from llm_collect.providers.anthropic_messages import ANTHROPIC_VERSION, DEFAULT_MAX_TOKENS
from tests.fakes.llm_servers import FakeLLMServer, answer_json


def target(url, provider="openai", model="gpt-4o", **parameters):
    return client.Target(
        provider=provider, model=model, base_url=url, api_key_env="FAKE_LLM_API_KEY", parameters=parameters
    )


def ask(t):
    return client.complete(t, system_prompt="SYSTEM", user_prompt="USER")


def test_openai_chat_completions_sends_a_system_message_and_a_json_schema(fake):
    reply = ask(target(fake.url))
    path, headers, body = fake.requests[0]
    assert path == "/chat/completions"
    assert headers["authorization"] == "Bearer sk-test"
    assert body["messages"] == [{"role": "system", "content": "SYSTEM"}, {"role": "user", "content": "USER"}]
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["strict"] is True
    assert "temperature" not in body  # provider default unless the researcher sets it
    assert json.loads(reply.text)["action"]
    assert (reply.input_tokens, reply.output_tokens) == (400, 200)
    assert reply.model_version == "gpt-4o-2024-08-06"
    assert reply.finish_reason == "stop"
    assert reply.latency >= 0


def test_o1_takes_a_developer_message_and_no_temperature(fake):
    ask(target(fake.url, model="o1", temperature=0.7, max_tokens=5000))
    body = fake.requests[0][2]
    assert body["messages"][0] == {"role": "developer", "content": "SYSTEM"}
    assert "temperature" not in body
    assert body["max_completion_tokens"] == 5000
    assert "max_tokens" not in body


def test_o1_mini_gets_the_system_prompt_folded_into_the_user_message(fake):
    ask(target(fake.url, model="o1-mini"))
    body = fake.requests[0][2]
    assert body["messages"] == [{"role": "user", "content": "SYSTEM\n\nUSER"}]
    assert "response_format" not in body


def test_researcher_parameters_are_sent_to_the_provider(fake):
    ask(target(fake.url, temperature=0.2, requests_per_minute=10))
    body = fake.requests[0][2]
    assert body["temperature"] == 0.2
    assert "requests_per_minute" not in body  # read by the collector, not the provider


def test_anthropic_messages_puts_the_system_prompt_top_level_with_its_headers(fake):
    reply = ask(target(fake.url, provider="anthropic", model="claude-3-7-sonnet-20250219"))
    path, headers, body = fake.requests[0]
    assert path == "/v1/messages"
    assert headers["x-api-key"] == "sk-test"
    assert headers["anthropic-version"] == ANTHROPIC_VERSION
    assert body["system"] == "SYSTEM"
    assert body["messages"] == [{"role": "user", "content": "USER"}]
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS
    assert reply.finish_reason == "end_turn"
    assert reply.model_version.startswith("claude-3-7-sonnet")
    assert json.loads(reply.text)["features"]


def test_gemini_generate_content_asks_for_json_with_a_schema(fake):
    reply = ask(target(fake.url, provider="gemini", model="gemini-1.5-flash", temperature=0.5))
    path, headers, body = fake.requests[0]
    assert path == "/models/gemini-1.5-flash:generateContent"
    assert headers["x-goog-api-key"] == "sk-test"
    assert body["systemInstruction"] == {"parts": [{"text": "SYSTEM"}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "USER"}]}]
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    assert body["generationConfig"]["responseSchema"]["type"] == "OBJECT"
    assert body["generationConfig"]["temperature"] == 0.5
    assert (reply.input_tokens, reply.output_tokens, reply.finish_reason) == (400, 200, "STOP")


def test_openai_compatible_endpoints_use_json_object_mode(fake):
    reply = ask(target(fake.url, provider="openai-compatible", model="deepseek-chat"))
    body = fake.requests[0][2]
    assert fake.requests[0][0] == "/chat/completions"
    assert body["response_format"] == {"type": "json_object"}
    assert json.loads(reply.text)["additional_information"]


def test_a_server_that_rejects_json_mode_can_be_told_not_to_get_it(fake):
    ask(target(fake.url, provider="openai-compatible", model="llama3.3", response_format=None))
    assert "response_format" not in fake.requests[0][2]


def test_a_self_hosted_endpoint_needs_no_key(fake):
    t = client.Target(provider="openai-compatible", model="llama3.3", base_url=fake.url)
    ask(t)
    assert "authorization" not in fake.requests[0][1]


def test_429_is_retryable_and_carries_retry_after():
    with FakeLLMServer(script=[{"status": 429, "retry_after": 7}]) as server, pytest.raises(client.Retryable) as caught:
        ask(target(server.url))
    assert caught.value.retry_after == 7
    assert caught.value.status == 429


def test_500_is_retryable():
    with FakeLLMServer(script=[{"status": 500}]) as server, pytest.raises(client.Retryable) as caught:
        ask(target(server.url, provider="anthropic", model="claude"))
    assert caught.value.status == 500


def test_a_timeout_is_retryable():
    with FakeLLMServer(script=[{"sleep": 2}]) as server, pytest.raises(client.Retryable, match="Timed out"):
        ask(target(server.url, timeout=0.3))


def test_400_is_permanent():
    with FakeLLMServer(script=[{"status": 400}]) as server, pytest.raises(client.Permanent):
        ask(target(server.url, provider="gemini", model="gemini-1.5-flash"))


def test_a_body_that_is_not_json_is_retryable():
    with (
        FakeLLMServer(script=[{"body": "<html>bad gateway</html>"}]) as server,
        pytest.raises(client.Retryable, match="not JSON"),
    ):
        ask(target(server.url))


def test_a_missing_key_names_the_variable(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    t = client.Target(provider="openai", model="gpt-4o")
    with pytest.raises(client.MissingKey, match="OPENAI_API_KEY"):
        ask(t)


def test_the_fake_answer_is_valid_json():
    assert json.loads(answer_json(3))["features"][0]["weight"] == 50
