"""Anthropic Messages (https://docs.anthropic.com/en/api/messages).

``x-api-key`` and ``anthropic-version`` headers, the system prompt top level, ``max_tokens`` required. The
models this study uses have no JSON mode: for answers the prompt asks for JSON. A prompt that carries its own
schema (llm_judging) gets it as one tool the model is made to call (``tool_choice``), Anthropic's way to a reply
that follows a JSON schema; the tool's input is read back as the reply text.
"""

from __future__ import annotations

import json

from .base import Prompt, ReplyContent, WireRequest, as_int, sent_parameters

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # required by the Messages API; enough for five features with reasons


class AnthropicMessages:
    default_base_url = "https://api.anthropic.com"
    default_key_variable = "ANTHROPIC_API_KEY"
    keyless_with_own_base_url = False

    def request(self, target, prompt: Prompt) -> WireRequest:
        body = {
            "model": target.model,
            "max_tokens": DEFAULT_MAX_TOKENS,
            "system": prompt.system,
            "messages": [{"role": "user", "content": prompt.user}],
            **sent_parameters(target),
        }
        if prompt.schema is not None:
            tool = {
                "name": prompt.schema.name,
                "description": "Record the reply.",
                "input_schema": prompt.schema.schema,
            }
            body.update(tools=[tool], tool_choice={"type": "tool", "name": prompt.schema.name})
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        return WireRequest(f"{target.endpoint_base}/v1/messages", headers, body)

    def auth_headers(self, key: str) -> dict:
        return {"x-api-key": key} if key else {}

    def read(self, raw: dict) -> ReplyContent:
        usage = raw.get("usage") or {}
        return ReplyContent(
            # Only text blocks: thinking blocks are the model's scratchpad, not its answer.
            text="".join(block_text(b) for b in raw.get("content") or []),
            input_tokens=as_int(usage.get("input_tokens")),
            output_tokens=as_int(usage.get("output_tokens")),  # thinking tokens are already in it
            model_version=str(raw.get("model") or ""),
            finish_reason=str(raw.get("stop_reason") or ""),
        )


def block_text(block: dict) -> str:
    """Text blocks as they are, a forced tool call's input as JSON; thinking blocks (a scratchpad) not at all."""
    if block.get("type") == "text":
        return block.get("text", "")
    if block.get("type") == "tool_use":
        return json.dumps(block.get("input"))
    return ""
