"""The answer's shape, defined once, and the services that write answers and choose the one judges see.

An answer (a system's reply to a vignette) names one to five morally relevant features, each with a
whole-number weight from 1 to 100 and a reason; the weights sum to 100. A weight of 0 is refused: the
method asks for the features that matter morally, so a feature named carries weight. The same shape
checks study-file answers, parsed LLM replies, the admin's feature rows and the respondents' answer
form, and gives the JSON Schemas sent to the providers (`answer_json_schema`, `gemini_answer_schema`).
PostgreSQL keeps a last guard on the sum (a deferred trigger) and the database on the count.
"""

from typing import Annotated, Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, TypeAdapter
from pydantic_core import PydanticCustomError

from ..models import MAX_FEATURES, WEIGHT_TOTAL, Answer, Feature, Study, System, Vignette
from .shapes import ShapeError, Text, WholeNumber, describe, place

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


SAME_STUDY = (
    "The system and the vignette belong to different studies: an answer's system and vignette must be one study's."
)


def check_same_study(*, system: System, vignette: Vignette) -> None:
    """An answer's system and vignette belong to one study (every writer asks; the database guards it too)."""
    if system.study_id != vignette.study_id:
        raise ValidationError(SAME_STUDY)


@transaction.atomic
def create_answer(
    *,
    system: System,
    vignette: Vignette,
    features: list[FeatureIn],
    action: str,
    additional_information: str = "",
    sample: int | None = None,
    raw_text: str = "",
    origin: str = Answer.Origin.ADMIN,
    selected: bool = False,
) -> Answer:
    check_same_study(system=system, vignette=vignette)
    errors = feature_errors(features)
    if errors:
        raise ValidationError(errors)
    if sample is None:
        sample = next_sample_number(system=system, vignette=vignette)
    answer = Answer.objects.create(
        system=system,
        vignette=vignette,
        sample=sample,
        action=action,
        additional_information=additional_information,
        raw_text=raw_text,
        origin=origin,
    )
    replace_features(answer=answer, features=features)
    if selected:
        select_answer(answer=answer)
    return answer


def next_sample_number(*, system: System, vignette: Vignette) -> int:
    last = Answer.objects.filter(system=system, vignette=vignette).order_by("-sample").first()
    return last.sample + 1 if last else 1


def replace_features(*, answer: Answer, features: list[FeatureIn]) -> None:
    errors = feature_errors(features)
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        answer.features.all().delete()
        Feature.objects.bulk_create(
            Feature(answer=answer, position=index, feature=item.feature, weight=item.weight, reason=item.reason)
            for index, item in enumerate(features, start=1)
        )


@transaction.atomic
def select_answer(*, answer: Answer, user=None) -> Answer:
    """Make this the one answer judges see for its system × vignette."""
    study = answer.vignette.study
    if study.status != Study.Status.DRAFT:
        raise ValidationError(
            f"Study '{study.slug}' is {study.status}: the answers judges see cannot change once it has gone live."
        )
    Answer.objects.filter(system=answer.system_id, vignette=answer.vignette_id, selected=True).exclude(
        pk=answer.pk
    ).update(selected=False, selected_by=None, selected_at=None)
    answer.selected = True
    answer.selected_by = user
    answer.selected_at = timezone.now()
    answer.save(update_fields=["selected", "selected_by", "selected_at"])
    return answer
