"""Anthropic Messages (https://docs.anthropic.com/en/api/messages).

``x-api-key`` and ``anthropic-version`` headers, the system prompt top level, ``max_tokens`` required. For
answers the prompt asks for JSON. A prompt that carries its own schema (llm_judging) gets it as one tool, the
Anthropic way to a reply that follows a JSON schema, and the tool's input is read back as the reply text:

- without extended thinking the model is made to call that tool (``tool_choice`` of type ``tool``);
- with extended thinking (``"thinking": {"type": "enabled", "budget_tokens": N}`` in the System's parameters)
  the API refuses a forced tool, so the tool is offered with ``tool_choice`` ``auto`` and the prompt asks for it:
  the model keeps its thinking, and a reply that answers in text instead is read by the same strict reader
  (every question needs its pick, or the reply is asked again). Thinking's own rules (a budget of at least
  1,024 tokens under ``max_tokens``, no temperature or top_k) are applied by surveys/llm_capabilities.py.

Read back: text blocks (thinking blocks are the model's scratchpad, never the answer) or the tool's input;
``stop_reason`` ``refusal`` is the outcome "refused", ``max_tokens`` is "length".
"""

from __future__ import annotations

import json
from typing import ClassVar

from surveys.llm_capabilities import adjust, anthropic_thinking

from .base import Prompt, ReplyContent, WireRequest, as_int, sent_parameters, target_capabilities

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # required by the Messages API; enough for five features with reasons
STOP_OUTCOMES = {"refusal": "refused", "max_tokens": "length", "model_context_window_exceeded": "length"}
USE_THE_TOOL = "Give your reply by calling the {name} tool once, with every field filled in."


class AnthropicMessages:
    default_base_url: ClassVar[str] = "https://api.anthropic.com"
    default_key_variable: ClassVar[str] = "ANTHROPIC_API_KEY"
    keyless_with_own_base_url: ClassVar[bool] = False

    def request(self, target, prompt: Prompt) -> WireRequest:
        params = sent_parameters(target)
        caps = target_capabilities(target)
        notes = adjust(params, caps, target.model)
        notes += anthropic_thinking(params, caps, target.model, default_max_tokens=DEFAULT_MAX_TOKENS)
        thinking = "thinking" in params
        system = prompt.system
        body = {"model": target.model, "max_tokens": DEFAULT_MAX_TOKENS, **params}
        if prompt.schema is not None:
            name = prompt.schema.name
            tool = {"name": name, "description": "Record the reply.", "input_schema": prompt.schema.schema}
            body.update(tools=[tool], tool_choice={"type": "auto"} if thinking else {"type": "tool", "name": name})
            if thinking:
                system = f"{system}\n\n{USE_THE_TOOL.format(name=name)}"
                notes.append("tool_choice auto: the API refuses a forced tool beside extended thinking.")
        body.update(system=system, messages=[{"role": "user", "content": prompt.user}])
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        return WireRequest(f"{target.endpoint_base}/v1/messages", headers, body, tuple(notes))

    def auth_headers(self, key: str) -> dict:
        return {"x-api-key": key} if key else {}

    def read(self, raw: dict) -> ReplyContent:
        usage = raw.get("usage") or {}
        blocks = raw.get("content") or []
        tool_inputs = [json.dumps(b.get("input")) for b in blocks if b.get("type") == "tool_use"]
        stop = str(raw.get("stop_reason") or "")
        outcome = STOP_OUTCOMES.get(stop, "")
        texts = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        return ReplyContent(
            # The tool's input when the model called it (its text beside it is commentary), else its text.
            text=tool_inputs[0] if tool_inputs else texts,
            input_tokens=as_int(usage.get("input_tokens")),
            output_tokens=as_int(usage.get("output_tokens")),  # thinking tokens are already in it
            model_version=str(raw.get("model") or ""),
            finish_reason=stop,
            outcome=outcome,
            outcome_reason=stop_said(stop, texts) if outcome else "",
        )


def stop_said(stop: str, texts: str) -> str:
    """The stop reason, with the model's own words when it refused (a cut text is only the answer's start)."""
    said = texts.strip() if stop == "refusal" else ""
    return f"stop_reason: {stop}" + (f". {said}" if said else "")
