"""What each model family accepts, as data: one line per family, overridable per System (no Django here).

It lives beside the System it describes: the System admin shows its notes, and llm_collect's wire formats
(llm_collect/providers/) build every request through it.

A request is built from the System's parameters as the researcher wrote them; this table says what the model
behind it takes, and ``adjust`` changes the parameters to fit: a setting the model refuses is dropped, a
budget is sent under the name the model wants, a thinking budget outside the family's range is brought into
it. Every change is a *note* (a sentence naming the setting and the reason) kept with the request and shown
on the collection start page, the judge model's admin page and each call's attempt log, so that nothing
is changed silently and nothing refused is sent.

A new family is one line in FAMILIES (the longest matching model-name prefix wins). A model the table does
not know takes its provider's defaults; a System can say what its model takes with
``"capabilities": {...}`` in its parameters (the keys of Capabilities), e.g.
``{"capabilities": {"sampling": false, "budget_field": "max_completion_tokens", "system_role": "developer"}}``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

SAMPLING = ("temperature", "top_p", "top_k", "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs",
            "logit_bias")  # fmt: skip
# The names a researcher may give an output budget; the family decides which one is sent.
BUDGET_NAMES = ("max_tokens", "max_completion_tokens", "max_output_tokens", "maxOutputTokens")
ANTHROPIC_MIN_THINKING = 1024  # the Messages API refuses a smaller budget_tokens


@dataclass(frozen=True)
class Capabilities:
    family: str = "default"
    sampling: bool = True  # temperature, top_p, penalties are accepted
    budget_field: str = "max_tokens"  # the body field that limits the output (Gemini: maxOutputTokens)
    system_role: str = "system"  # "system", "developer", or "user" (folded into the user message)
    json_schema: bool = True  # strict structured output (OpenAI's response_format json_schema)
    thinking: str = ""  # "anthropic": thinking {budget_tokens}; "gemini": thinkingConfig.thinkingBudget
    thinking_budget: tuple[int, int] | None = None  # the accepted range of a Gemini thinkingBudget
    thinking_off: bool = True  # a Gemini thinkingBudget of 0 (no thinking) is accepted


PROVIDER_DEFAULTS = {
    "openai": Capabilities(family="OpenAI chat model"),
    "openai-compatible": Capabilities(family="OpenAI-compatible endpoint"),
    # The Messages API as the anthropic SDK 2.x types it takes no temperature, top_p or top_k.
    "anthropic": Capabilities(family="Anthropic model", sampling=False),
    "gemini": Capabilities(family="Gemini model", budget_field="maxOutputTokens"),
}

REASONING = {"sampling": False, "budget_field": "max_completion_tokens", "system_role": "developer"}
# (provider, model-name prefixes, what the family differs in from its provider's default)
FAMILIES: list[tuple[str, tuple[str, ...], dict]] = [
    ("openai", ("gpt-5", "o1", "o3", "o4"), {"family": "OpenAI reasoning model", **REASONING}),
    ("openai", ("gpt-5-chat",), {"family": "OpenAI chat model"}),  # gpt-5-chat-latest is not a reasoning model
    ("openai", ("o1-mini", "o1-preview"),
     {"family": "OpenAI early reasoning model", **REASONING, "system_role": "user", "json_schema": False}),
    ("anthropic", ("claude-3-7", "claude-sonnet-4", "claude-opus-4", "claude-haiku-4", "claude-4"),
     {"family": "Anthropic model with extended thinking", "sampling": False, "thinking": "anthropic"}),
    ("gemini", ("gemini-2.5-flash",), {"family": "Gemini 2.5 Flash", "budget_field": "maxOutputTokens",
                                       "thinking": "gemini", "thinking_budget": (0, 24576)}),
    ("gemini", ("gemini-2.5-flash-lite",), {"family": "Gemini 2.5 Flash-Lite", "budget_field": "maxOutputTokens",
                                            "thinking": "gemini", "thinking_budget": (512, 24576)}),
    ("gemini", ("gemini-2.5-pro",), {"family": "Gemini 2.5 Pro", "budget_field": "maxOutputTokens",
                                     "thinking": "gemini", "thinking_budget": (128, 32768), "thinking_off": False}),
    ("gemini", ("gemini-3",), {"family": "Gemini 3", "budget_field": "maxOutputTokens", "thinking": "gemini"}),
]  # fmt: skip


def capabilities_for(provider: str, model: str, overrides: dict | None = None) -> Capabilities:
    """The family of `model` (longest prefix), with a System's own ``capabilities`` over it."""
    name = model.split("/")[-1].lower()
    matches = [
        (len(prefix), differences)
        for family_provider, prefixes, differences in FAMILIES
        for prefix in prefixes
        if family_provider == provider and name.startswith(prefix)
    ]
    found = PROVIDER_DEFAULTS.get(provider, Capabilities())
    if matches:
        found = replace(found, **max(matches, key=lambda match: match[0])[1])
    known = {f.name for f in fields(Capabilities)}
    own = {key: value for key, value in (overrides or {}).items() if key in known}
    if "thinking_budget" in own and own["thinking_budget"] is not None:
        own["thinking_budget"] = tuple(own["thinking_budget"])
    return replace(found, **own) if own else found


def adjust(params: dict, caps: Capabilities, model: str) -> list[str]:
    """Change `params` (in place) to what the family accepts; the notes that say what was changed and why."""
    notes = []
    if not caps.sampling:
        for name in SAMPLING:
            if name in params:
                params.pop(name)
                notes.append(f"{name} not sent: {model} ({caps.family}) does not accept it.")
    budgets = [name for name in BUDGET_NAMES if name in params]
    for name in budgets[1:]:
        params.pop(name)
        notes.append(f"{name} not sent: {budgets[0]} already gives the output budget.")
    if budgets and budgets[0] != caps.budget_field:
        params[caps.budget_field] = params.pop(budgets[0])
        notes.append(f"{budgets[0]} sent as {caps.budget_field}, the name {model} ({caps.family}) takes.")
    return notes


def anthropic_thinking(params: dict, caps: Capabilities, model: str, *, default_max_tokens: int) -> list[str]:
    """Extended thinking as the Messages API accepts it: a budget of at least 1,024 tokens under max_tokens,
    and no temperature or top_k beside it. Without thinking support the setting is dropped."""
    thinking = params.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return []
    if caps.thinking != "anthropic":
        params.pop("thinking")
        return [f"thinking not sent: {model} ({caps.family}) has no extended thinking."]
    notes = []
    budget = int(thinking.get("budget_tokens") or ANTHROPIC_MIN_THINKING)
    if budget < ANTHROPIC_MIN_THINKING:
        notes.append(f"thinking budget_tokens {budget} raised to {ANTHROPIC_MIN_THINKING}, the API's minimum.")
        budget = ANTHROPIC_MIN_THINKING
    params["thinking"] = {**thinking, "budget_tokens": budget}
    for name in ("temperature", "top_k"):
        if name in params:
            params.pop(name)
            notes.append(f"{name} not sent: the API refuses it beside extended thinking.")
    if "top_p" in params and not 0.95 <= float(params["top_p"]) <= 1:
        params.pop("top_p")
        notes.append("top_p not sent: beside extended thinking the API takes only 0.95 to 1.")
    max_tokens = int(params.get("max_tokens") or default_max_tokens)
    if max_tokens <= budget:
        max_tokens = budget + default_max_tokens
        notes.append(f"max_tokens raised to {max_tokens}: it must exceed the thinking budget ({budget}).")
    params["max_tokens"] = max_tokens
    return notes


def gemini_thinking(config: dict, caps: Capabilities, model: str) -> list[str]:
    """A thinkingConfig the model accepts: dropped for a model without thinking, its budget brought into range."""
    thinking = config.get("thinkingConfig", config.get("thinking_config"))
    if not isinstance(thinking, dict):
        return []
    if caps.thinking != "gemini":
        config.pop("thinkingConfig", None)
        config.pop("thinking_config", None)
        return [f"thinkingConfig not sent: {model} ({caps.family}) has no thinking budget."]
    key = "thinkingBudget" if "thinkingBudget" in thinking else "thinking_budget"
    budget = thinking.get(key)
    if budget is None or budget == -1 or caps.thinking_budget is None:  # -1: the model decides
        return []
    low, high = caps.thinking_budget
    wanted = int(budget)
    if wanted == 0 and caps.thinking_off:
        return []
    fitted = min(max(wanted, max(low, 1) if wanted == 0 else low), high)
    if fitted == wanted:
        return []
    thinking[key] = fitted
    return [f"thinkingBudget {wanted} sent as {fitted}: {model} ({caps.family}) takes {low} to {high}."]


def parameter_notes(provider: str, model: str, parameters: dict) -> list[str]:
    """What a System's parameters lose or change before they are sent to its model, and why (the notes the
    wire formats record on every call, here without building a request; judging may add one of its own)."""
    params = {k: v for k, v in (parameters or {}).items() if k != "capabilities"}
    caps = capabilities_for(provider, model, (parameters or {}).get("capabilities"))
    if provider == "gemini":
        config = {**(params.pop("generationConfig", None) or {}), **params}
        return adjust(config, caps, model) + gemini_thinking(config, caps, model)
    notes = adjust(params, caps, model)
    if provider == "anthropic":
        notes += anthropic_thinking(params, caps, model, default_max_tokens=4096)
    return notes
