"""Google Gemini generateContent (https://ai.google.dev/api/generate-content).

``x-goog-api-key``, ``systemInstruction``, and ``generationConfig.responseMimeType=application/json`` with a
``responseSchema`` (an OpenAPI subset: upper-case types, no additionalProperties). A System's parameters go
where the API wants them: the request's own fields (``safetySettings``, ``tools``, ``toolConfig``,
``cachedContent``, ``labels``) at the top level of the body, everything else (temperature, ``thinkingConfig``,
the output budget as ``maxOutputTokens``, or a whole ``generationConfig``) inside ``generationConfig``.

Read back: the candidate's text parts (thought parts are not the answer); a ``promptFeedback.blockReason`` or a
safety ``finishReason`` (SAFETY, PROHIBITED_CONTENT, BLOCKLIST, SPII, RECITATION) is the outcome "blocked" with
the categories rated as the cause, ``MAX_TOKENS`` is "length".
"""

from __future__ import annotations

from typing import ClassVar

from surveys.llm_capabilities import adjust, gemini_thinking
from surveys.services.answer_shape import gemini_answer_schema

from .base import Prompt, ReplyContent, WireRequest, as_int, gemini_schema, sent_parameters, target_capabilities

GEMINI_SCHEMA = gemini_answer_schema()
# GenerateContentRequest's own fields, in both spellings the API reads (proto3 JSON takes either).
TOP_LEVEL = frozenset(
    {"safetySettings", "safety_settings", "tools", "toolConfig", "tool_config", "cachedContent", "cached_content",
     "labels"}
)  # fmt: skip
BLOCKING_FINISH = frozenset({"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "IMAGE_SAFETY"})


class GeminiGenerate:
    default_base_url: ClassVar[str] = "https://generativelanguage.googleapis.com/v1beta"
    default_key_variable: ClassVar[str] = "GEMINI_API_KEY"
    keyless_with_own_base_url: ClassVar[bool] = False

    def request(self, target, prompt: Prompt) -> WireRequest:
        params = sent_parameters(target)
        caps = target_capabilities(target)
        top_level = {key: params.pop(key) for key in list(params) if key in TOP_LEVEL}
        config = {**params.pop("generationConfig", {}), **params}
        notes = adjust(config, caps, target.model) + gemini_thinking(config, caps, target.model)
        schema = gemini_schema(prompt.schema.schema) if prompt.schema is not None else GEMINI_SCHEMA
        body = {
            "systemInstruction": {"parts": [{"text": prompt.system}]},
            "contents": [{"role": "user", "parts": [{"text": prompt.user}]}],
            **top_level,
            "generationConfig": {"responseMimeType": "application/json", "responseSchema": schema, **config},
        }
        model = target.model if target.model.startswith("models/") else f"models/{target.model}"
        url = f"{target.endpoint_base}/{model}:generateContent"
        return WireRequest(url, {"content-type": "application/json"}, body, tuple(notes))

    def auth_headers(self, key: str) -> dict:
        return {"x-goog-api-key": key} if key else {}

    def read(self, raw: dict) -> ReplyContent:
        candidate = (raw.get("candidates") or [{}])[0]
        parts = (candidate.get("content") or {}).get("parts") or []
        usage = raw.get("usageMetadata") or {}
        finish = str(candidate.get("finishReason") or "")
        outcome, reason = blocked_or_cut(raw.get("promptFeedback") or {}, candidate, finish)
        return ReplyContent(
            text="".join(p.get("text", "") for p in parts if not p.get("thought")),
            input_tokens=as_int(usage.get("promptTokenCount")),
            # Gemini 2.5 counts thinking apart from the candidates, and bills it as output.
            output_tokens=as_int(usage.get("candidatesTokenCount")) + as_int(usage.get("thoughtsTokenCount")),
            model_version=str(raw.get("modelVersion") or ""),
            finish_reason=finish or str((raw.get("promptFeedback") or {}).get("blockReason") or ""),
            outcome=outcome,
            outcome_reason=reason,
        )


def blocked_or_cut(feedback: dict, candidate: dict, finish: str) -> tuple[str, str]:
    """("blocked", why) for a blocked prompt or a candidate stopped for safety, ("length", …) for MAX_TOKENS."""
    if feedback.get("blockReason"):
        why = f"promptFeedback.blockReason: {feedback['blockReason']}"
        if feedback.get("blockReasonMessage"):
            why += f" ({feedback['blockReasonMessage']})"
        return "blocked", why + flagged(feedback.get("safetyRatings"))
    if finish in BLOCKING_FINISH:
        return "blocked", f"finishReason: {finish}" + flagged(candidate.get("safetyRatings"))
    if finish == "MAX_TOKENS":
        return "length", "finishReason: MAX_TOKENS"
    return "", ""


def flagged(ratings) -> str:
    """The safety categories that blocked, or were rated MEDIUM or HIGH."""
    causes = [
        f"{r.get('category')} {r.get('probability', '')}".strip()
        for r in ratings or []
        if r.get("blocked") or r.get("probability") in ("MEDIUM", "HIGH")
    ]
    return f"; rated: {', '.join(causes)}" if causes else ""
