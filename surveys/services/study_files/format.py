"""The study file's format as typed models: import validates through them, export writes through them.

Each object of the file is a `FileObject` that names the table it fills (`fills`). Its field names are
that table's field names (a file key that differs is the field's alias, e.g. `order` for `order_rule`), so
a value is checked against its database field with no second copy of the limits: the maximum length,
the choices, a slug's characters, a URL's form and the integer range all come from the Django field.

Adding a study setting: add the field to `Study` (surveys/models/study.py) and one line to the block that
carries it below (`Design`, `ProlificSettings`, `QualitySettings`, `InstrumentSettings`). Import sets
it, export writes it, the checks follow the model field; describe it in docs/study-files.md.
"""

import math
import re
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, ClassVar, Literal

from django.core.exceptions import FieldDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import URLValidator, slug_re
from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError
from pydantic_core.core_schema import ValidationInfo

from surveys.key_variables import key_variable_problem
from surveys.models import Answer, Question, Study, System, Vignette
from surveys.models.translations import LANGUAGE_CODE, Translatable, translation_problems

from ..answer_shape import AnswerShape, FeatureIn
from ..authenticity import stored_signals_problem
from ..shape_basics import JsonObject, RequiredText, Text, WholeNumber, shown

# The same range on every database: SQLite would store what PostgreSQL's smallint refuses.
INTEGER_RANGES = BaseDatabaseOperations.integer_field_ranges


SLUG = (slug_re, "letters a–z, digits, hyphens and underscores")  # keys that go into URLs


def _database_problem(field: models.Field, value: Any, slug: tuple[re.Pattern, str] = SLUG) -> str | None:
    """Why a value cannot fill this database field, or None."""
    if isinstance(value, str):
        if not value.strip() and not field.blank:
            return "is required"
        if field.max_length and len(value) > field.max_length:
            return f"must be at most {field.max_length} characters, not {len(value)}"
        if value == "":
            return None  # a field that may be blank
        if field.choices and value not in {choice for choice, _ in field.flatchoices}:
            return f"{shown(value)} is not one of {', '.join(choice for choice, _ in field.flatchoices)}"
        if isinstance(field, models.SlugField) and not slug[0].match(value):
            return f"{shown(value)} may hold only {slug[1]}"
        if isinstance(field, models.URLField):
            try:
                URLValidator()(value)
            except DjangoValidationError:
                return f"{shown(value)} is not a web address (https://…)"
    elif isinstance(value, int) and not isinstance(value, bool):
        low, high = INTEGER_RANGES.get(field.get_internal_type(), (-math.inf, math.inf))
        if value > high:
            return f"must be a whole number of at most {high}, not {value}"
        if value < low:
            return f"must be a whole number of at least {low}, not {value}"
    elif isinstance(value, Decimal) and isinstance(field, models.DecimalField):
        return _decimal_problem(field, value)
    return None


def _decimal_problem(field: models.DecimalField, value: Decimal) -> str | None:
    """Why the number does not fit the column's digits (PostgreSQL refuses it; SQLite would store it), or None."""
    whole_digits = field.max_digits - field.decimal_places
    largest = Decimal(10) ** whole_digits - Decimal(10) ** -field.decimal_places
    # Compared before rounding: quantize itself fails on a number as large as 1e300.
    if abs(value) > largest or abs(value.quantize(Decimal(10) ** -field.decimal_places)) > largest:
        return f"must be at most {largest}, not {value:g}"
    return None


class FileObject(BaseModel):
    """An object of the study file: an unknown key is an error; each value must fit its database field."""

    model_config = ConfigDict(extra="forbid", validate_by_alias=True, validate_by_name=False)
    fills: ClassVar[type[models.Model] | None] = None  # the table whose fields this object's keys fill
    slug_rule: ClassVar[tuple[re.Pattern, str]] = SLUG  # what a slug field of this object may hold

    @field_validator("*")
    @classmethod
    def _fits_its_database_field(cls, value: Any, info: ValidationInfo) -> Any:
        try:
            field = cls.fills._meta.get_field(info.field_name) if cls.fills and info.field_name else None
        except FieldDoesNotExist:
            field = None
        problem = (
            isinstance(field, models.Field) and not field.is_relation and _database_problem(field, value, cls.slug_rule)
        )
        if problem:
            raise PydanticCustomError("database_field", problem)
        return value

    @classmethod
    def from_row(cls, row: models.Model, **values: Any):
        """This object as the file writes it, read from a row without checking (stored data is exported as it is)."""
        own = {name: getattr(row, name) for name in cls.model_fields if name not in values and hasattr(row, name)}
        return cls.model_construct(**own, **values)


# A whole number of at least 1 (counts, minutes, seconds); the upper limit comes from the database field.
Count = Annotated[WholeNumber, Field(ge=1)]


def _fraction(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:  # NaN fails too
        raise PydanticCustomError("fraction", "must be a number from 0 to 1, not {value}", {"value": shown(value)})
    return float(value)


Fraction = Annotated[float, BeforeValidator(_fraction)]


def _amount(value: Any) -> Decimal:
    # A JSON number, not a text or true/false; the field's digits and the positive-rate rule are checked after.
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal) or not math.isfinite(value):
        raise PydanticCustomError("amount", "must be a number such as 9.50, not {value}", {"value": shown(value)})
    return Decimal(str(value))


# Money in a currency's major unit (9.50 is £9.50), written to files as a number.
Amount = Annotated[Decimal, BeforeValidator(_amount), PlainSerializer(float, return_type=float, when_used="json")]
Percent = Annotated[WholeNumber, Field(ge=0)]


def _two_texts_or_none(value: Any) -> Any:
    # As in the admin: anything but [] or two texts would show judges the default options instead.
    if value is None:
        return []
    two = isinstance(value, list) and len(value) == 2 and all(isinstance(o, str) and o.strip() for o in value)
    if value != [] and not two:
        raise PydanticCustomError(
            "attention_options", "must be a list of exactly two texts, or [], not {value}", {"value": shown(value)}
        )
    return value


AttentionOptions = Annotated[list[Text], BeforeValidator(_two_texts_or_none)]


def _translations_of(model: type[Translatable]) -> BeforeValidator:
    """Checks a `translations` object for `model`'s rows: {language code: {translatable key: text}}
    (models/translations.py); the field's type is `Annotated[dict, _translations_of(Model), _translations_field()]`."""

    def check(value: Any) -> Any:
        if value is None:
            return {}
        problems = translation_problems(value, model.TRANSLATABLE_KEYS)
        if problems:
            raise PydanticCustomError("translations", "; ".join(problems))
        return value

    return BeforeValidator(check)


def _translations_field() -> Any:
    """Left out of a file: {}; left out of an export when empty."""
    return Field(default_factory=dict, exclude_if=lambda given: not given)


def _language(value: Any) -> Any:
    if value is not None and not (isinstance(value, str) and LANGUAGE_CODE.match(value)):
        raise PydanticCustomError(
            "language", "{value} is not a language code (such as en, de or ar)", {"value": shown(value)}
        )
    return value


Language = Annotated[Text, BeforeValidator(_language)]

# Settings blocks: a key the file leaves out stays None here and leaves its Study field as it is
# (a new study: the model's default). Only the keys a file gives are set (`model_fields_set`).
# LEFT_OUT is that None, typed Any: pydantic never checks a default against the field's type, while every
# value a file gives is validated to it.
LEFT_OUT: Any = None


class Design(FileObject):
    fills = Study
    repetitions: Count = LEFT_OUT
    vignettes_per_participant: Count = LEFT_OUT
    order_rule: Text = Field(default=LEFT_OUT, alias="order")
    answers_per_respondent: Count = LEFT_OUT
    minimum_seconds: Count = LEFT_OUT
    reservation_minutes: Count = LEFT_OUT


class ProlificSettings(FileObject):
    fills = Study
    prolific_study_id: Text = Field(default=LEFT_OUT, alias="study_id")
    completion_code: Text = LEFT_OUT
    failed_attention_code: Text = LEFT_OUT
    no_consent_code: Text = LEFT_OUT
    screened_out_code: Text = LEFT_OUT
    answering_completion_code: Text = LEFT_OUT
    answering_no_consent_code: Text = LEFT_OUT
    answering_full_code: Text = LEFT_OUT
    invalid_policy: Text = LEFT_OUT
    estimated_minutes: Count = LEFT_OUT
    # What "Create or update Prolific draft" sends (surveys/prolific/drafts/).
    prolific_currency: Text = Field(default=LEFT_OUT, alias="currency")
    prolific_hourly_rate: Annotated[Amount, Field(gt=0)] = Field(default=LEFT_OUT, alias="hourly_rate")
    prolific_margin_percent: Percent = Field(default=LEFT_OUT, alias="margin_percent")


class QualitySettings(FileObject):  # minimum_seconds stays in the design block, where files have always had it
    fills = Study
    fast_fraction_of_median: Fraction = LEFT_OUT
    attention_prompt: Text = LEFT_OUT  # may not be empty: judges are shown it (the Study field is not blank)
    attention_options: AttentionOptions = LEFT_OUT


class InstrumentSettings(FileObject):  # empty: the method's instrument
    fills = Study
    system_prompt: Text = LEFT_OUT
    user_prompt: Text = LEFT_OUT


class AnalysisSettings(FileObject):
    fills = Study
    bias_reduced: bool | None = Field(None, strict=True)  # Firth's fit for the reported estimates


class ConsentSettings(FileObject):  # what the consent page tells judges, and a study without Prolific
    fills = Study
    researchers_contact: Text = LEFT_OUT
    ethics_reference: Text = LEFT_OUT
    data_retention: Text = LEFT_OUT
    lab_study: bool | None = Field(None, strict=True)


SETTING_BLOCKS: dict[str, type[FileObject]] = {
    "design": Design,
    "prolific": ProlificSettings,
    "quality": QualitySettings,
    "instrument": InstrumentSettings,
    "analysis": AnalysisSettings,
    "consent": ConsentSettings,
}


class QuestionEntry(FileObject):
    fills = Question
    key: RequiredText
    label: Text = Field("", exclude_if=lambda value: not value)  # written only when set
    text: RequiredText
    translations: Annotated[dict, _translations_of(Question), _translations_field()]


class VignetteEntry(FileObject):
    fills = Vignette
    key: RequiredText
    character: RequiredText
    source: Text = ""
    set: Text = Field("", exclude_if=lambda value: not value)  # written only when the study has sets
    text: RequiredText
    translations: Annotated[dict, _translations_of(Vignette), _translations_field()]


def _empty(value: Any) -> bool:
    return not value


class SystemEntry(FileObject):
    fills = System
    # A system's key is often its model's name (the source study's `llama-3.3`); it never goes into a URL.
    slug_rule = (re.compile(r"^[-\w.]+\Z", re.ASCII), "letters a–z, digits, hyphens, underscores and dots")
    key: RequiredText
    label: RequiredText
    kind: Text = System.Kind.LLM
    # Written only when set; an LLM system needs its provider and model (checked even when left out).
    provider: Text = Field("", validate_default=True, exclude_if=_empty)
    model: Text = Field("", validate_default=True, exclude_if=_empty)
    base_url: Text = Field("", exclude_if=_empty)
    api_key_env: Text = Field("", exclude_if=_empty)
    parameters: JsonObject = Field(default_factory=dict, exclude_if=_empty)

    @field_validator("provider", "model")
    @classmethod
    def _given_for_an_llm(cls, value: str, info: ValidationInfo) -> str:
        if not value and info.data.get("kind") == System.Kind.LLM:
            raise PydanticCustomError("required", "is required for an LLM system")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _an_allowed_key_variable(cls, value: str) -> str:
        problem = key_variable_problem(value) if value else None
        if problem:
            raise PydanticCustomError("key_variable", problem)
        return value


class AnswerKey(FileObject):
    fills = Answer
    system: RequiredText
    vignette: RequiredText
    sample: Count = 1


def _signals(value: dict | None) -> dict | None:
    problem = value is not None and stored_signals_problem(value)
    if problem:
        raise PydanticCustomError("signals", problem)
    return value


class AuthenticityEntry(BaseModel):
    """How a human answer was written (docs/authenticity.md): the rating and the signals it came from."""

    model_config = ConfigDict(extra="forbid")
    rating: Literal["high", "mixed", "low", "unknown"]
    signals: Annotated[JsonObject | None, AfterValidator(_signals)] = None
    # A low-rated answer selected anyway: who confirmed it (their username) and when (docs/authenticity.md).
    confirmed_by: str | None = Field(None, exclude_if=lambda value: value is None)
    confirmed_at: datetime | None = Field(None, exclude_if=lambda value: value is None)


class AnswerEntry(AnswerShape, AnswerKey):
    """An answer in a file: which system, vignette and sample, then the answer's one shape."""

    selected: bool = Field(False, strict=True)
    translations: Annotated[dict, _translations_of(Answer), _translations_field()]
    # Exports leave it out; an LLM answer's raw reply survives a re-import.
    raw_text: Text = Field(default=LEFT_OUT, exclude=True)
    authenticity: AuthenticityEntry | None = Field(
        None, exclude_if=lambda value: value is None
    )  # answers written in the answer-writing survey only

    @model_validator(mode="after")
    def _low_authenticity_selected_only_when_confirmed(self) -> "AnswerEntry":
        low = self.authenticity is not None and self.authenticity.rating == "low"
        if self.selected and low and self.authenticity.confirmed_at is None:  # type: ignore[union-attr]
            raise PydanticCustomError(
                "low_authenticity",
                "is selected but rated low authenticity without a confirmation: give authenticity.confirmed_at "
                "(and confirmed_by) once a researcher has reviewed it, or do not select it",
            )
        return self

    @classmethod
    def from_answer(cls, answer: Answer) -> "AnswerEntry":
        features = [
            FeatureIn.model_construct(feature=f.feature, weight=f.weight, reason=f.reason)
            for f in answer.features.all()
        ]
        authenticity = (
            AuthenticityEntry.model_construct(
                rating=answer.authenticity,
                signals=answer.writing_signals,
                confirmed_by=answer.low_authenticity_confirmed_by.get_username()
                if answer.low_authenticity_confirmed_by
                else None,
                confirmed_at=answer.low_authenticity_confirmed_at,
            )
            if answer.authenticity
            else None
        )
        return cls.from_row(
            answer, system=answer.system.key, vignette=answer.vignette.key, features=features, authenticity=authenticity
        )


class StudyFile(FileObject):
    fills = Study
    slug: RequiredText
    name: RequiredText
    description: Text = LEFT_OUT  # left out: a re-imported draft keeps its description
    language: Language = LEFT_OUT  # left out: English, or a re-imported draft keeps its language
    translations: Annotated[dict, _translations_of(Study), _translations_field()]
    status: Text = Study.Status.DRAFT
    reference_system: RequiredText
    design: Design = Field(default_factory=Design)
    prolific: ProlificSettings = LEFT_OUT
    quality: QualitySettings = LEFT_OUT
    instrument: InstrumentSettings = LEFT_OUT
    analysis: AnalysisSettings = LEFT_OUT
    consent: ConsentSettings = LEFT_OUT
    questions: list[QuestionEntry]
    systems: list[SystemEntry]
    vignettes: list[VignetteEntry]
    answers: list[AnswerEntry] = []

    def settings(self) -> list[FileObject]:
        """The settings blocks the file gives."""
        return [block for block in (getattr(self, name) for name in SETTING_BLOCKS) if block is not None]
