"""Google Gemini generateContent (https://ai.google.dev/api/generate-content).

``x-goog-api-key``, ``systemInstruction``, and ``generationConfig.responseMimeType=application/json`` with a
``responseSchema`` (an OpenAPI subset: upper-case types, no additionalProperties).
"""

from __future__ import annotations

from surveys.services.answer_shape import gemini_answer_schema

from .base import Prompt, ReplyContent, WireRequest, as_int, gemini_schema, sent_parameters

GEMINI_SCHEMA = gemini_answer_schema()


class GeminiGenerate:
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"
    default_key_variable = "GEMINI_API_KEY"
    keyless_with_own_base_url = False

    def request(self, target, prompt: Prompt) -> WireRequest:
        params = sent_parameters(target)
        schema = gemini_schema(prompt.schema.schema) if prompt.schema is not None else GEMINI_SCHEMA
        generation_config = {"responseMimeType": "application/json", "responseSchema": schema}
        generation_config.update(params.pop("generationConfig", {}))
        generation_config.update(params)
        body = {
            "systemInstruction": {"parts": [{"text": prompt.system}]},
            "contents": [{"role": "user", "parts": [{"text": prompt.user}]}],
            "generationConfig": generation_config,
        }
        model = target.model if target.model.startswith("models/") else f"models/{target.model}"
        url = f"{target.endpoint_base}/{model}:generateContent"
        return WireRequest(url, {"content-type": "application/json"}, body)

    def auth_headers(self, key: str) -> dict:
        return {"x-goog-api-key": key} if key else {}

    def read(self, raw: dict) -> ReplyContent:
        candidate = (raw.get("candidates") or [{}])[0]
        parts = (candidate.get("content") or {}).get("parts") or []
        usage = raw.get("usageMetadata") or {}
        return ReplyContent(
            text="".join(p.get("text", "") for p in parts if not p.get("thought")),
            input_tokens=as_int(usage.get("promptTokenCount")),
            # Gemini 2.5 counts thinking apart from the candidates, and bills it as output.
            output_tokens=as_int(usage.get("candidatesTokenCount")) + as_int(usage.get("thoughtsTokenCount")),
            model_version=str(raw.get("modelVersion") or ""),
            finish_reason=str(candidate.get("finishReason") or ""),
        )
