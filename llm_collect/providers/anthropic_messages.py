"""Anthropic Messages (https://docs.anthropic.com/en/api/messages).

``x-api-key`` and ``anthropic-version`` headers, the system prompt top level, ``max_tokens`` required. The
models this study uses have no JSON mode: the prompt asks for JSON.
"""

from __future__ import annotations

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
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION}
        return WireRequest(f"{target.endpoint_base}/v1/messages", headers, body)

    def auth_headers(self, key: str) -> dict:
        return {"x-api-key": key} if key else {}

    def read(self, raw: dict) -> ReplyContent:
        usage = raw.get("usage") or {}
        return ReplyContent(
            # Only text blocks: thinking blocks are the model's scratchpad, not its answer.
            text="".join(b.get("text", "") for b in raw.get("content") or [] if b.get("type") == "text"),
            input_tokens=as_int(usage.get("input_tokens")),
            output_tokens=as_int(usage.get("output_tokens")),  # thinking tokens are already in it
            model_version=str(raw.get("model") or ""),
            finish_reason=str(raw.get("stop_reason") or ""),
        )
