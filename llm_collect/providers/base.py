"""What every wire format provides: a request to send and a reader for what comes back.

A provider class knows its own JSON only (paths, headers, body, where the text and usage sit); the HTTP call,
timeouts, error classification and keys are the client's (llm_collect/client.py over moraljudge/http.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Protocol

from surveys.llm_capabilities import BUDGET_NAMES, Capabilities, capabilities_for

if TYPE_CHECKING:
    from ..client import Target

# Read by this project, never sent to the provider.
OWN_PARAMETERS = frozenset(
    {"requests_per_minute", "concurrency", "burst", "timeout", "price_per_million", "capabilities",
     "length_retry_max_tokens"}
)  # fmt: skip


@dataclass(frozen=True)
class OutputSchema:
    """The JSON shape a reply must have, as JSON Schema (strict: every property required, no extras)."""

    name: str
    schema: dict


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str
    # None: the study file's answer shape (answer collection); llm_judging passes its judgment shape.
    schema: OutputSchema | None = None


@dataclass(frozen=True)
class WireRequest:
    """One POST: the URL, headers without the key, and the JSON body (stored on the Generation as sent)."""

    url: str
    headers: dict
    body: dict
    notes: tuple[str, ...] = ()  # what was changed from the System's parameters to fit the model, and why


@dataclass(frozen=True)
class ReplyContent:
    """What the project keeps from a provider's reply body."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0  # billed output, reasoning or thinking tokens included
    model_version: str = ""
    finish_reason: str = ""
    # Why the reply holds no usable text, as the provider said (LLMCall.Outcome: refused, length, blocked; empty:
    # nothing said), and the provider's own words for it.
    outcome: str = ""
    outcome_reason: str = ""


class WireFormat(Protocol):
    """One provider wire format. Register a new one in providers/__init__.py under its System.Provider value."""

    default_base_url: ClassVar[str]
    default_key_variable: ClassVar[str]
    keyless_with_own_base_url: ClassVar[bool]  # a self-hosted server (vLLM, Ollama) needs no key

    def request(self, target: Target, prompt: Prompt) -> WireRequest: ...

    def auth_headers(self, key: str) -> dict: ...

    def read(self, raw: dict) -> ReplyContent:
        """Text and usage from a 200 body; raises KeyError, TypeError or ValueError on a shape it cannot read."""
        ...


def sent_parameters(target: Target) -> dict:
    """The System's parameters as the provider should get them (the project's own ones left out), with the
    larger output budget of a retry after a length cut (``target.max_output_tokens``) in place of its own."""
    params = {k: v for k, v in target.parameters.items() if k not in OWN_PARAMETERS}
    if target.max_output_tokens:
        for name in BUDGET_NAMES:
            params.pop(name, None)
        params["max_tokens"] = target.max_output_tokens
    return params


def target_capabilities(target: Target) -> Capabilities:
    return capabilities_for(target.provider, target.model, target.parameters.get("capabilities"))


def gemini_schema(schema: dict) -> dict:
    """JSON Schema as Gemini's responseSchema wants it: an OpenAPI subset, upper-case types, no extras."""
    out = {}
    for key, value in schema.items():
        if key == "additionalProperties":
            continue
        if key == "type":
            out[key] = value.upper()
        elif key == "properties":
            out[key] = {name: gemini_schema(sub) for name, sub in value.items()}
            out["propertyOrdering"] = list(value)
        elif key == "items":
            out[key] = gemini_schema(value)
        else:
            out[key] = value
    return out


def as_int(value) -> int:
    return int(value or 0)
