"""OpenAI Chat Completions (https://platform.openai.com/docs/api-reference/chat/create).

GPT-4o and the like get a system message and Structured Outputs (``response_format`` of type ``json_schema``).
Reasoning models (o1, o3, o4 …) take no temperature and use ``max_completion_tokens``; o1 and later read the
system prompt as a ``developer`` message, while o1-mini and o1-preview accept neither it nor ``response_format``,
so the system prompt is folded into the user message and the JSON shape is asked for in words only.
"""

from __future__ import annotations

import re

from surveys.services.answer_shape import answer_json_schema

from .base import Prompt, ReplyContent, WireRequest, as_int, sent_parameters

# The answer shape (the study file's), as JSON Schema.
ANSWER_SCHEMA = answer_json_schema()
REASONING_UNSUPPORTED = ("temperature", "top_p", "presence_penalty", "frequency_penalty")


def is_reasoning_model(model: str) -> bool:
    """OpenAI's o-series (o1, o1-mini, o3-mini, o4-mini …)."""
    return re.match(r"^o\d", model.split("/")[-1]) is not None


def folds_system_prompt(model: str) -> bool:
    """o1-mini and o1-preview accept neither system nor developer messages."""
    name = model.split("/")[-1]
    return name.startswith("o1-mini") or name.startswith("o1-preview")


def schema_format(prompt: Prompt | None = None) -> dict:
    if prompt is not None and prompt.schema is not None:
        wanted = prompt.schema
        return {"type": "json_schema", "json_schema": {"name": wanted.name, "strict": True, "schema": wanted.schema}}
    return {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": ANSWER_SCHEMA}}


class OpenAIChat:
    default_base_url = "https://api.openai.com/v1"
    default_key_variable = "OPENAI_API_KEY"
    keyless_with_own_base_url = False

    def request(self, target, prompt: Prompt) -> WireRequest:
        params = sent_parameters(target)
        messages, response_format = self.shape(target, prompt, params)
        body = {"model": target.model, "response_format": response_format, "messages": messages, **params}
        if body.get("response_format") is None:  # folded o1-mini, or a System that set "response_format": null
            body.pop("response_format", None)
        return WireRequest(f"{target.endpoint_base}/chat/completions", {"content-type": "application/json"}, body)

    def shape(self, target, prompt: Prompt, params: dict) -> tuple[list[dict], dict | None]:
        """The messages and response_format for this model (params lose what a reasoning model refuses)."""
        messages = [{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.user}]
        if not is_reasoning_model(target.model):
            return messages, schema_format(prompt)
        for unsupported in REASONING_UNSUPPORTED:
            params.pop(unsupported, None)
        if "max_tokens" in params:
            params["max_completion_tokens"] = params.pop("max_tokens")
        if folds_system_prompt(target.model):
            return [{"role": "user", "content": f"{prompt.system}\n\n{prompt.user}"}], None
        messages[0]["role"] = "developer"
        return messages, schema_format(prompt)

    def auth_headers(self, key: str) -> dict:
        return {"authorization": f"Bearer {key}"} if key else {}

    def read(self, raw: dict) -> ReplyContent:
        choice = (raw.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        usage = raw.get("usage") or {}
        return ReplyContent(
            # A refusal comes instead of content; kept as the text so the researcher sees why.
            text=message.get("content") or message.get("refusal") or "",
            input_tokens=as_int(usage.get("prompt_tokens")),
            output_tokens=as_int(usage.get("completion_tokens")),  # reasoning tokens are already in it
            model_version=str(raw.get("model") or ""),
            finish_reason=str(choice.get("finish_reason") or ""),
        )
