"""OpenAI Chat Completions (https://platform.openai.com/docs/api-reference/chat/create).

GPT-4o and the like get a system message and Structured Outputs (``response_format`` of type ``json_schema``).
What a model family takes is data (surveys/llm_capabilities.py): reasoning models (gpt-5*, o1, o3, o4 …) take no
temperature or top_p, limit their output with ``max_completion_tokens`` and read the system prompt as a
``developer`` message; o1-mini and o1-preview accept neither that nor ``response_format``, so the system prompt
is folded into the user message and the JSON shape is asked for in words only.

Read back: the message's ``content``; a ``refusal`` instead of it is the outcome "refused" (its text kept),
``finish_reason`` ``length`` is "length" and ``content_filter`` is "blocked".
"""

from __future__ import annotations

from typing import ClassVar

from surveys.llm_capabilities import Capabilities, adjust
from surveys.services.answer_shape import answer_json_schema

from .base import Prompt, ReplyContent, WireRequest, as_int, sent_parameters, target_capabilities

# The answer shape (the study file's), as JSON Schema.
ANSWER_SCHEMA = answer_json_schema()
FINISH_OUTCOMES = {"length": "length", "content_filter": "blocked"}


def schema_format(prompt: Prompt | None = None) -> dict:
    if prompt is not None and prompt.schema is not None:
        wanted = prompt.schema
        return {"type": "json_schema", "json_schema": {"name": wanted.name, "strict": True, "schema": wanted.schema}}
    return {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": ANSWER_SCHEMA}}


class OpenAIChat:
    default_base_url: ClassVar[str] = "https://api.openai.com/v1"
    default_key_variable: ClassVar[str] = "OPENAI_API_KEY"
    keyless_with_own_base_url: ClassVar[bool] = False

    def request(self, target, prompt: Prompt) -> WireRequest:
        params = sent_parameters(target)
        caps = target_capabilities(target)
        notes = adjust(params, caps, target.model)
        body = {
            "model": target.model,
            "response_format": self.response_format(prompt, caps),
            "messages": self.messages(prompt, caps),
            **params,
        }
        if body.get("response_format") is None:  # folded o1-mini, or a System that set "response_format": null
            body.pop("response_format", None)
        url = f"{target.endpoint_base}/chat/completions"
        return WireRequest(url, {"content-type": "application/json"}, body, tuple(notes))

    def messages(self, prompt: Prompt, caps: Capabilities) -> list[dict]:
        if caps.system_role == "user":
            return [{"role": "user", "content": f"{prompt.system}\n\n{prompt.user}"}]
        return [{"role": caps.system_role, "content": prompt.system}, {"role": "user", "content": prompt.user}]

    def response_format(self, prompt: Prompt, caps: Capabilities) -> dict | None:
        return schema_format(prompt) if caps.json_schema else None

    def auth_headers(self, key: str) -> dict:
        return {"authorization": f"Bearer {key}"} if key else {}

    def read(self, raw: dict) -> ReplyContent:
        choice = (raw.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        usage = raw.get("usage") or {}
        finish = str(choice.get("finish_reason") or "")
        refusal = message.get("refusal") or ""
        outcome = "refused" if refusal else FINISH_OUTCOMES.get(finish, "")
        return ReplyContent(
            text=message.get("content") or "",
            input_tokens=as_int(usage.get("prompt_tokens")),
            output_tokens=as_int(usage.get("completion_tokens")),  # reasoning tokens are already in it
            model_version=str(raw.get("model") or ""),
            finish_reason=finish,
            outcome=outcome,
            outcome_reason=refusal or (f"finish_reason: {finish}" if outcome else ""),
        )
