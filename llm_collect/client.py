"""Provider clients over httpx: the only module that imports httpx, and it touches no ORM.

Four wire formats:

- ``openai``: OpenAI Chat Completions. GPT-4o and the like get a system message and Structured Outputs
  (``response_format`` of type ``json_schema``). Reasoning models (o1, o3, o4 …) take no temperature and
  use ``max_completion_tokens``; o1 and later read the system prompt as a ``developer`` message, while
  o1-mini and o1-preview accept neither it nor ``response_format``, so the system prompt is folded into the
  user message and the JSON shape is asked for in words only.
- ``anthropic``: Anthropic Messages (``x-api-key``, ``anthropic-version``, ``system`` top level,
  ``max_tokens`` required). The models this study uses have no JSON mode: the prompt asks for JSON.
- ``gemini``: Google ``generateContent`` (``x-goog-api-key``, ``systemInstruction``,
  ``generationConfig.responseMimeType=application/json`` with a ``responseSchema``).
- ``openai-compatible``: DeepSeek, vLLM, Ollama, hosted Llama: ``base_url + /chat/completions`` with
  ``response_format={"type": "json_object"}`` (set ``"response_format": null`` in the parameters for a server
  that rejects it).

Provider defaults apply (temperature, top_p …) unless the System's parameters set them. Parameters are sent
as they are, except the few this project reads itself (see OWN_PARAMETERS).
"""

from __future__ import annotations

import email.utils
import json
import os
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx

from surveys.services.answers import answer_json_schema, gemini_answer_schema

OPENAI = "openai"
ANTHROPIC = "anthropic"
GEMINI = "gemini"
OPENAI_COMPATIBLE = "openai-compatible"

DEFAULT_BASE_URLS = {
    OPENAI: "https://api.openai.com/v1",
    ANTHROPIC: "https://api.anthropic.com",
    GEMINI: "https://generativelanguage.googleapis.com/v1beta",
    OPENAI_COMPATIBLE: "https://api.deepseek.com",
}
DEFAULT_KEY_VARIABLES = {
    OPENAI: "OPENAI_API_KEY",
    ANTHROPIC: "ANTHROPIC_API_KEY",
    GEMINI: "GEMINI_API_KEY",
    OPENAI_COMPATIBLE: "DEEPSEEK_API_KEY",
}
ANTHROPIC_VERSION = "2023-06-01"
ANTHROPIC_DEFAULT_MAX_TOKENS = 4096  # required by the Messages API; enough for five features with reasons
DEFAULT_TIMEOUT = 120.0  # seconds for a whole reply; connecting gets less
# Read by this project, never sent to the provider.
OWN_PARAMETERS = {"requests_per_minute", "concurrency", "burst", "timeout", "price_per_million"}

# The answer shape (the study file's), as JSON Schema for the providers that take one.
ANSWER_SCHEMA = answer_json_schema()
# Gemini's responseSchema is an OpenAPI subset: upper-case types, no additionalProperties.
GEMINI_SCHEMA = gemini_answer_schema()


class ClientError(Exception):
    """A call that produced no usable reply."""

    def __init__(self, message: str, *, status: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class Retryable(ClientError):
    """Timeouts, connection errors, 429 and 5xx: worth another call later (after retry_after seconds if set)."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class Permanent(ClientError):
    """Other 4xx, a missing key: another identical call cannot help."""


class MissingKey(Permanent):
    """The environment variable holding a provider key is not set."""


@dataclass(frozen=True)
class Target:
    """What to call: a System's provider settings as plain values."""

    provider: str
    model: str
    base_url: str = ""
    api_key_env: str = ""
    parameters: dict = field(default_factory=dict)
    label: str = ""

    @property
    def endpoint_base(self) -> str:
        return (self.base_url or DEFAULT_BASE_URLS[self.provider]).rstrip("/")

    @property
    def timeout(self) -> float:
        return float(self.parameters.get("timeout") or DEFAULT_TIMEOUT)


@dataclass(frozen=True)
class Reply:
    text: str
    raw: dict
    request: dict
    input_tokens: int = 0
    output_tokens: int = 0
    model_version: str = ""
    finish_reason: str = ""
    latency: float = 0.0  # seconds


def key_variable(target: Target) -> str | None:
    """The environment variable holding the key, or None for a keyless self-hosted endpoint."""
    if target.api_key_env:
        return target.api_key_env
    if target.provider == OPENAI_COMPATIBLE and target.base_url:
        return None  # vLLM, Ollama and the like on the researcher's own machine need no key
    return DEFAULT_KEY_VARIABLES.get(target.provider)


def api_key(target: Target) -> str:
    name = key_variable(target)
    if name is None:
        return ""
    value = os.environ.get(name, "")
    if not value:
        raise MissingKey(
            f"The environment variable {name} is not set: it must hold the {target.provider} API key "
            f"for system '{target.label or target.model}'."
        )
    return value


def build_client(*, timeout: float = DEFAULT_TIMEOUT, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """The one place an httpx.Client is made: explicit timeouts, no redirects, no proxies from the env."""
    return httpx.Client(
        timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
        transport=transport,
        follow_redirects=False,
        trust_env=False,
        headers={"user-agent": "moraljudge-llm-collect/1"},
    )


def is_reasoning_model(model: str) -> bool:
    """OpenAI's o-series (o1, o1-mini, o3-mini, o4-mini …)."""
    return re.match(r"^o\d", model.split("/")[-1]) is not None


def folds_system_prompt(model: str) -> bool:
    """o1-mini and o1-preview accept neither system nor developer messages."""
    name = model.split("/")[-1]
    return name.startswith("o1-mini") or name.startswith("o1-preview")


def build_request(target: Target, *, system_prompt: str, user_prompt: str) -> tuple[str, dict, dict]:
    """(url, headers without the key, JSON body) for this provider's wire format."""
    params = {k: v for k, v in target.parameters.items() if k not in OWN_PARAMETERS}
    base = target.endpoint_base
    if target.provider in (OPENAI, OPENAI_COMPATIBLE):
        messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": user_prompt}]
        body: dict = {"model": target.model}
        if target.provider == OPENAI and is_reasoning_model(target.model):
            for unsupported in ("temperature", "top_p", "presence_penalty", "frequency_penalty"):
                params.pop(unsupported, None)
            if "max_tokens" in params:
                params["max_completion_tokens"] = params.pop("max_tokens")
            if folds_system_prompt(target.model):
                messages = [{"role": "user", "content": f"{system_prompt}\n\n{user_prompt}"}]
            else:
                messages[0]["role"] = "developer"
                body["response_format"] = openai_schema_format()
        elif target.provider == OPENAI:
            body["response_format"] = openai_schema_format()
        else:
            body["response_format"] = {"type": "json_object"}
        body["messages"] = messages
        body.update(params)
        if body.get("response_format") is None:
            body.pop("response_format", None)
        return f"{base}/chat/completions", {"content-type": "application/json"}, body
    if target.provider == ANTHROPIC:
        body = {
            "model": target.model,
            "max_tokens": ANTHROPIC_DEFAULT_MAX_TOKENS,
            "system": system_prompt,
            "messages": [{"role": "user", "content": user_prompt}],
        }
        body.update(params)
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        return f"{base}/v1/messages", headers, body
    if target.provider == GEMINI:
        generation_config = {"responseMimeType": "application/json", "responseSchema": GEMINI_SCHEMA}
        generation_config.update(params.pop("generationConfig", {}))
        generation_config.update(params)
        body = {
            "systemInstruction": {"parts": [{"text": system_prompt}]},
            "contents": [{"role": "user", "parts": [{"text": user_prompt}]}],
            "generationConfig": generation_config,
        }
        model = target.model if target.model.startswith("models/") else f"models/{target.model}"
        return f"{base}/{model}:generateContent", {"content-type": "application/json"}, body
    raise Permanent(f"Unknown provider '{target.provider}'.")


def openai_schema_format() -> dict:
    return {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": ANSWER_SCHEMA}}


def auth_headers(target: Target, key: str) -> dict:
    if not key:
        return {}
    if target.provider == ANTHROPIC:
        return {"x-api-key": key}
    if target.provider == GEMINI:
        return {"x-goog-api-key": key}
    return {"authorization": f"Bearer {key}"}


def complete(target: Target, *, system_prompt: str, user_prompt: str, http: httpx.Client | None = None) -> Reply:
    """One call. Raises Retryable or Permanent; returns the Reply otherwise (its text may still be unusable)."""
    key = api_key(target)
    url, headers, body = build_request(target, system_prompt=system_prompt, user_prompt=user_prompt)
    headers = {**headers, **auth_headers(target, key)}
    own_client = http is None
    http = http or build_client(timeout=target.timeout)
    started = time.monotonic()
    try:
        response = http.post(url, headers=headers, json=body)
    except httpx.TimeoutException as exc:
        raise Retryable(f"Timed out after {time.monotonic() - started:.1f} s: {exc!r}") from exc
    except httpx.TransportError as exc:
        raise Retryable(f"Connection error: {exc!r}") from exc
    finally:
        if own_client:
            http.close()
    latency = time.monotonic() - started
    check_status(response)
    try:
        raw = response.json()
    except ValueError as exc:
        raise Retryable(
            f"The provider sent a body that is not JSON (HTTP {response.status_code}).",
            status=response.status_code,
            body=response.text[:2000],
        ) from exc
    if not isinstance(raw, dict):
        raise Retryable("The provider sent JSON that is not an object.", body=response.text[:2000])
    reply = read_reply(target.provider, raw)
    return Reply(request=body, latency=latency, **reply)


def check_status(response: httpx.Response) -> None:
    status = response.status_code
    if status < 400:
        return
    message = f"HTTP {status} from {response.request.url.host}: {response.text[:500]}"
    if status in (408, 409, 429) or status >= 500:
        raise Retryable(message, retry_after=retry_after_seconds(response.headers), status=status, body=response.text)
    raise Permanent(message, status=status, body=response.text)


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """Retry-After as seconds (a number or an HTTP date), or OpenAI's retry-after-ms."""
    if value := headers.get("retry-after-ms"):
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def read_reply(provider: str, raw: dict) -> dict:
    """Text, usage, model version and finish reason from a provider's response body."""
    try:
        if provider in (OPENAI, OPENAI_COMPATIBLE):
            choice = (raw.get("choices") or [{}])[0]
            message = choice.get("message") or {}
            text = message.get("content") or message.get("refusal") or ""
            usage = raw.get("usage") or {}
            return {
                "text": text,
                "raw": raw,
                "input_tokens": int(usage.get("prompt_tokens") or 0),
                "output_tokens": int(usage.get("completion_tokens") or 0),
                "model_version": str(raw.get("model") or ""),
                "finish_reason": str(choice.get("finish_reason") or ""),
            }
        if provider == ANTHROPIC:
            blocks = raw.get("content") or []
            usage = raw.get("usage") or {}
            return {
                "text": "".join(b.get("text", "") for b in blocks if b.get("type") == "text"),
                "raw": raw,
                "input_tokens": int(usage.get("input_tokens") or 0),
                "output_tokens": int(usage.get("output_tokens") or 0),
                "model_version": str(raw.get("model") or ""),
                "finish_reason": str(raw.get("stop_reason") or ""),
            }
        if provider == GEMINI:
            candidate = (raw.get("candidates") or [{}])[0]
            parts = (candidate.get("content") or {}).get("parts") or []
            usage = raw.get("usageMetadata") or {}
            return {
                "text": "".join(p.get("text", "") for p in parts if not p.get("thought")),
                "raw": raw,
                "input_tokens": int(usage.get("promptTokenCount") or 0),
                "output_tokens": int(usage.get("candidatesTokenCount") or 0),
                "model_version": str(raw.get("modelVersion") or ""),
                "finish_reason": str(candidate.get("finishReason") or ""),
            }
    except (AttributeError, TypeError, ValueError) as exc:
        raise Retryable(f"Unexpected response shape: {exc}", body=json.dumps(raw)[:2000]) from exc
    raise Permanent(f"Unknown provider '{provider}'.")
