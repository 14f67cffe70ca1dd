"""Every request body checked against the official SDKs' own request types, with no key the SDK does not know.

openai and anthropic type their request params as TypedDicts: pydantic validates the values (a TypeAdapter), and
``unknown_keys`` walks the same types for keys they do not declare (a TypedDict lets extra keys through, the APIs
do not). google-genai types its request parts as pydantic models that already forbid extras; the body around them
(contents, systemInstruction, generationConfig, safetySettings …) is assembled here from those models, as the
SDK's own request converter does. The SDKs are dev-only (requirements-dev.txt): nothing here calls a provider.
"""

from __future__ import annotations

import collections.abc
import functools
import types
import typing

import typing_extensions as typing_x
from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic.alias_generators import to_camel


def openai_params():
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    return CompletionCreateParamsNonStreaming


def anthropic_params():
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    return MessageCreateParamsNonStreaming


def gemini_request_model() -> type[BaseModel]:
    from google.genai import types as genai

    class GenerateContentRequest(BaseModel):
        """The REST body of models.generateContent, built from google-genai's own part models."""

        model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")
        contents: list[genai.Content]
        system_instruction: genai.Content | None = None
        generation_config: genai.GenerationConfig | None = None
        safety_settings: list[genai.SafetySetting] | None = None
        tools: list[genai.Tool] | None = None
        tool_config: genai.ToolConfig | None = None
        cached_content: str | None = None
        labels: dict[str, str] | None = None

    return GenerateContentRequest


@functools.cache
def adapter(annotation) -> TypeAdapter:
    return TypeAdapter(annotation)  # building one for a large TypedDict takes a while: once per type


@functools.cache
def gemini_adapter() -> TypeAdapter:
    return TypeAdapter(gemini_request_model())


def validate(body: dict, params) -> list[str]:
    """Problems with `body` as the TypedDict `params`: pydantic's, then keys the types do not declare."""
    problems = []
    try:
        adapter(params).validate_python(body)
    except Exception as error:  # pydantic's ValidationError, said in full
        problems.append(str(error))
    return problems + unknown_keys(body, params, "body")


def unknown_keys(value, annotation, path: str) -> list[str]:
    """Keys of `value` that no TypedDict in `annotation` declares (for a union: the member that fits best)."""
    annotation = unwrap(annotation)
    origin = typing_x.get_origin(annotation)
    if typing_x.is_typeddict(annotation) and isinstance(value, dict):
        hints = typing_x.get_type_hints(annotation)
        problems = [f"{path}.{key}: not a field of {annotation.__name__}" for key in value if key not in hints]
        for key, item in value.items():
            if key in hints:
                problems += unknown_keys(item, hints[key], f"{path}.{key}")
        return problems
    if origin in (typing.Union, types.UnionType):
        tries = [unknown_keys(value, member, path) for member in typing_x.get_args(annotation) if fits(value, member)]
        return min(tries, key=len) if tries else []
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence) and isinstance(value, list):
        (item_type,) = typing_x.get_args(annotation) or (object,)
        return [problem for n, item in enumerate(value) for problem in unknown_keys(item, item_type, f"{path}[{n}]")]
    return []


def unwrap(annotation):
    """Required[X], NotRequired[X], Annotated[X, …] and a TypeAliasType are X."""
    while True:
        origin = typing_x.get_origin(annotation)
        if origin in (
            typing_x.Required,
            typing_x.NotRequired,
            typing_x.Annotated,
            typing.Required,
            typing.NotRequired,
            typing.Annotated,
        ):
            annotation = typing_x.get_args(annotation)[0]
        elif hasattr(annotation, "__value__"):
            annotation = annotation.__value__
        else:
            return annotation


def fits(value, member) -> bool:
    member = unwrap(member)
    if typing_x.is_typeddict(member):
        if not isinstance(value, dict):
            return False
        literal = {k: typing_x.get_args(unwrap(t)) for k, t in typing_x.get_type_hints(member).items()
                   if typing_x.get_origin(unwrap(t)) in (typing.Literal, typing_x.Literal)}  # fmt: skip
        return all(value.get(k, options[0]) in options for k, options in literal.items() if k in value)
    try:
        adapter(member).validate_python(value)
    except Exception:
        return False
    return True
