"""What the real APIs refuse with a 400, for the fake provider: a request the project builds wrong fails here as it
would in production, not only against the SDKs' typed params (tests/llm_collect/test_sdk_request_bodies.py).

Each rule quotes the provider's documented behaviour; the messages follow the providers' own wording.
"""

from __future__ import annotations

import re

OPENAI_KEYS = {
    "model", "messages", "response_format", "temperature", "top_p", "max_tokens", "max_completion_tokens", "n",
    "stop", "seed", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs", "logit_bias", "user",
    "reasoning_effort", "verbosity", "service_tier", "store", "metadata", "tools", "tool_choice", "stream",
    "parallel_tool_calls", "prediction", "modalities", "audio", "web_search_options", "prompt_cache_key",
    "safety_identifier",
}  # fmt: skip
OPENAI_SAMPLING = ("temperature", "top_p", "presence_penalty", "frequency_penalty", "logprobs", "logit_bias")
# As the anthropic SDK 2.x types MessageCreateParams: no temperature, top_p or top_k any more.
ANTHROPIC_KEYS = {
    "model", "max_tokens", "messages", "system", "stop_sequences", "stream", "metadata", "tools", "tool_choice",
    "thinking", "service_tier", "container", "output_config", "cache_control", "inference_geo",
}  # fmt: skip
GEMINI_KEYS = {"contents", "systemInstruction", "generationConfig", "safetySettings", "tools", "toolConfig",
               "cachedContent", "labels", "system_instruction", "generation_config", "safety_settings",
               "tool_config", "cached_content"}  # fmt: skip
GEMINI_CONFIG = {
    "stopSequences", "responseMimeType", "responseSchema", "responseJsonSchema", "candidateCount",
    "maxOutputTokens", "temperature", "topP", "topK", "seed", "presencePenalty", "frequencyPenalty",
    "responseLogprobs", "logprobs", "thinkingConfig", "mediaResolution", "responseModalities", "speechConfig",
    "enableEnhancedCivicAnswers", "propertyOrdering",
}  # fmt: skip
GEMINI_THINKING_BUDGETS = {"gemini-2.5-flash-lite": (512, 24576, True), "gemini-2.5-flash": (0, 24576, True),
                           "gemini-2.5-pro": (128, 32768, False)}  # fmt: skip


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def openai_refusal(body: dict) -> str | None:
    model = str(body.get("model", ""))
    unknown = sorted(set(body) - OPENAI_KEYS)
    if unknown:
        return f"Unrecognized request argument supplied: {unknown[0]}"
    reasoning = re.match(r"^(o\d|gpt-5)", model) and not model.startswith("gpt-5-chat")
    if not reasoning:
        return None
    if "max_tokens" in body:
        return ("Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.")  # fmt: skip
    for name in OPENAI_SAMPLING:
        if name in body:
            return f"Unsupported parameter: '{name}' is not supported with this model."
    if model.startswith(("o1-mini", "o1-preview")):
        if any(m.get("role") in ("system", "developer") for m in body.get("messages", [])):
            return "Unsupported value: 'messages[0].role' does not support 'system' with this model."
        if "response_format" in body:
            return "Unsupported parameter: 'response_format' is not supported with this model."
    return None


def anthropic_refusal(body: dict) -> str | None:
    unknown = sorted(set(body) - ANTHROPIC_KEYS)
    if unknown:
        return f"{unknown[0]}: Extra inputs are not permitted"
    if "max_tokens" not in body:
        return "max_tokens: Field required"
    thinking = body.get("thinking") or {}
    if thinking.get("type") != "enabled":
        return None
    model = str(body.get("model", ""))
    if not re.match(r"^claude-(3-7|sonnet-4|opus-4|haiku-4|4)", model):
        return f"'claude' model {model} does not support thinking."
    budget = thinking.get("budget_tokens", 0)
    if budget < 1024:
        return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    if budget >= body["max_tokens"]:
        return "`max_tokens` must be greater than `thinking.budget_tokens`."
    if (body.get("tool_choice") or {}).get("type") in ("tool", "any"):
        return "Thinking may not be enabled when tool_choice forces tool use."
    for name in ("temperature", "top_k"):
        if name in body:
            return f"`{name}` may not be set when thinking is enabled."
    return None


def gemini_refusal(model: str, body: dict) -> str | None:
    unknown = sorted(set(body) - GEMINI_KEYS)
    if unknown:
        return f'Invalid JSON payload received. Unknown name "{unknown[0]}": Cannot find field.'
    config = body.get("generationConfig") or body.get("generation_config") or {}
    for key in config:
        if camel(key) not in GEMINI_CONFIG:
            return f"Invalid JSON payload received. Unknown name \"{key}\" at 'generation_config': Cannot find field."
    thinking = config.get("thinkingConfig") or config.get("thinking_config")
    if thinking is None:
        return None
    family = next((f for f in sorted(GEMINI_THINKING_BUDGETS, key=len, reverse=True) if model.startswith(f)), None)
    if family is None and not model.startswith("gemini-3"):
        return "Thinking is not supported for this model."
    budget = thinking.get("thinkingBudget", thinking.get("thinking_budget"))
    if family is None or budget is None or budget == -1:
        return None
    low, high, can_disable = GEMINI_THINKING_BUDGETS[family]
    if (budget == 0 and not can_disable) or (budget != 0 and not low <= budget <= high):
        return f"The thinking budget {budget} is invalid. Please choose a value between {low} and {high}."
    return None
