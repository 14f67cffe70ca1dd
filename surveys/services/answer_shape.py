"""The answer's shape, defined once: what every writer of answers checks (answer_records.py writes them).

An answer (a system's reply to a vignette) names one to five morally relevant features, each with a
whole-number weight from 1 to 100 and a reason; the weights sum to 100. A weight of 0 is refused: the
method asks for the features that matter morally, so a feature named carries weight. The same shape
checks study-file answers, parsed LLM replies, the admin's feature rows and the respondents' answer
form, and gives the JSON Schemas sent to the providers (`answer_json_schema`, `gemini_answer_schema`).
PostgreSQL keeps a last guard on the sum (a deferred trigger) and the database on the count.
"""

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, TypeAdapter
from pydantic_core import PydanticCustomError

from ..models import MAX_FEATURES, WEIGHT_TOTAL
from .shape_basics import ShapeError, Text, WholeNumber, describe, place

MIN_WEIGHT = 1  # see the module's docstring: a feature that matters morally carries weight


def _named(text: str) -> str:
    if not text.strip():
        raise PydanticCustomError("blank", "must not be empty")
    return text


def _weight(weight: int) -> int:
    if not MIN_WEIGHT <= weight <= WEIGHT_TOTAL:
        raise PydanticCustomError(
            "weight_range",
            "{weight} is outside {low}–{high}: every feature named carries some weight",
            {"weight": weight, "low": MIN_WEIGHT, "high": WEIGHT_TOTAL},
        )
    return weight


class FeatureIn(BaseModel):
    """One morally relevant feature of an answer, with its weight and the reason it matters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    feature: Annotated[Text, AfterValidator(_named)]
    weight: Annotated[WholeNumber, AfterValidator(_weight)]
    reason: Text = ""


def _feature_count(items: Any) -> Any:
    # Counted before each feature is read, so six features are "too many" even while one of them is also wrong.
    if isinstance(items, list | tuple) and not items:
        raise PydanticCustomError("no_features", "an answer needs at least one feature")
    if isinstance(items, list | tuple) and len(items) > MAX_FEATURES:
        raise PydanticCustomError(
            "too_many_features", "at most {most} features, not {count}", {"most": MAX_FEATURES, "count": len(items)}
        )
    return items


def _weights_sum(features: list[FeatureIn]) -> list[FeatureIn]:
    total = sum(item.weight for item in features)
    if total != WEIGHT_TOTAL:
        raise PydanticCustomError(
            "weights_total", "weights sum to {total}, not {target}", {"total": total, "target": WEIGHT_TOTAL}
        )
    return features


Features = Annotated[list[FeatureIn], BeforeValidator(_feature_count), AfterValidator(_weights_sum)]


class AnswerShape(BaseModel):
    """An answer as providers are asked to write it and as study files carry it (with its features)."""

    model_config = ConfigDict(extra="forbid")

    features: Features
    action: Text = ""  # the conclusion; replies and respondents must give one, stored answers may lack it
    additional_information: Text = ""


_FEATURES = TypeAdapter(Features)


def validate_features(items: list[FeatureIn] | list[dict]) -> list[FeatureIn]:
    """The features if they obey the answer's rules; else a pydantic ValidationError naming each problem."""
    return _FEATURES.validate_python(items)


def shape_errors(error: ShapeError, *, within: tuple = ()) -> list[str]:
    """Each problem as `place: message`, or the bare message when it is about the whole."""
    lines = []
    for item in error.errors():
        loc = within + tuple(item["loc"])
        lines.append(f"{place(loc)}: {describe(item)}" if loc else describe(item))
    return lines


def feature_errors(features: list[FeatureIn]) -> list[str]:
    """The rules every answer's features obey, as messages (empty when they hold)."""
    try:
        validate_features(features)
    except ShapeError as error:
        return [line.removeprefix("features: ") for line in shape_errors(error, within=("features",))]
    return []


def answer_json_schema() -> dict:
    """The answer as strict JSON Schema (OpenAI Structured Outputs: every property required, no others)."""
    return _provider_schema(AnswerShape.model_json_schema(), gemini=False)


def gemini_answer_schema() -> dict:
    """The answer as Gemini's responseSchema: the OpenAPI subset, upper-case types, no additionalProperties."""
    return _provider_schema(AnswerShape.model_json_schema(), gemini=True)


def _provider_schema(schema: dict, *, gemini: bool, definitions: dict | None = None) -> dict:
    """Only the keywords both providers accept: types, properties, items and (all) required properties."""
    definitions = schema.get("$defs", {}) if definitions is None else definitions
    if "$ref" in schema:
        schema = definitions[schema["$ref"].rsplit("/", 1)[-1]]
    kind = schema["type"]
    out: dict = {"type": kind.upper() if gemini else kind}
    if kind == "object":
        out["properties"] = {
            name: _provider_schema(value, gemini=gemini, definitions=definitions)
            for name, value in schema["properties"].items()
        }
        out["required"] = list(schema["properties"])
        if not gemini:
            out["additionalProperties"] = False
    elif kind == "array":
        out["items"] = _provider_schema(schema["items"], gemini=gemini, definitions=definitions)
    return out
