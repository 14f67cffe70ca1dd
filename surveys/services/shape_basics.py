"""What every typed shape shares: text the database can store, and errors in words with their place.

The shapes themselves are pydantic models (the answer in `answer_shape.py`, the study file in `study_files/`).
A place is the path to a value as a researcher reads a file, e.g. `answers[3].features[1].weight`;
`place()` turns pydantic's error locations into that form and `describe()` says what is wrong in the
project's words rather than pydantic's ("must be a whole number, not 'x'").
"""

import json
import math
import re
import reprlib
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Strict, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError

ShapeError = ValidationError  # what a shape raises; `.errors()` lists each problem with its location

MAX_JSON_DEPTH = 20  # a system's parameters are a few flat settings; deeper is a mistake, not a setting

_brief = reprlib.Repr()
_brief.maxlevel, _brief.maxstring, _brief.maxother, _brief.maxlist, _brief.maxdict = 2, 60, 60, 4, 4


def shown(value: Any) -> str:
    """A value as an error message quotes it: short, escaped, and safe for any depth of nesting."""
    return _brief.repr(value)


def _storable(text: str) -> str:
    """The text, if both databases can store it."""
    # PostgreSQL refuses both in text columns; SQLite would store them, so both databases refuse them here.
    if "\x00" in text:
        raise PydanticCustomError("nul_character", "must not hold a NUL character (\\u0000)")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise PydanticCustomError(
            "lone_surrogate", "must be Unicode text, not hold a lone surrogate such as \\ud800"
        ) from None
    return text


def _empty_for_null(value: Any) -> Any:
    return "" if value is None else value


# Text as the database stores it; a JSON null is the empty text (files have always been read that way).
Text = Annotated[str, BeforeValidator(_empty_for_null), Strict(), AfterValidator(_storable)]
WholeNumber = Annotated[int, Strict()]  # not true/false, not 2.0, not "2"


def _required(text: str) -> str:
    if not text.strip():
        raise PydanticCustomError("required", "is required")
    return text


RequiredText = Annotated[Text, AfterValidator(_required)]


def _storable_json(value: Any) -> Any:
    """A JSON value the database can store: finite numbers, storable text, not nested without end."""
    pending: list[tuple[Any, tuple]] = [(value, ())]
    while pending:  # not recursive: the value may be deep
        item, loc = pending.pop()
        where = place(loc) or "the top"
        if len(loc) > MAX_JSON_DEPTH:
            raise PydanticCustomError("too_deep", "nests deeper than {depth} levels", {"depth": MAX_JSON_DEPTH})
        if isinstance(item, str) and not is_storable(item):
            raise PydanticCustomError(
                "unstorable", "the text at {where} is not storable (NUL or lone surrogate)", {"where": where}
            )
        if isinstance(item, float) and not math.isfinite(item):
            raise PydanticCustomError(
                "not_finite", "{where} is {value}, which JSON cannot hold", {"where": where, "value": item}
            )
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str) or not is_storable(key):
                    raise PydanticCustomError("unstorable", "a key at {where} is not storable text", {"where": where})
                pending.append((child, (*loc, key)))
        elif isinstance(item, list):
            pending.extend((child, (*loc, index)) for index, child in enumerate(item))
    return value


def is_storable(text: str) -> bool:
    try:
        _storable(text)
    except PydanticCustomError:
        return False
    return True


JsonObject = Annotated[dict[str, Any], Strict(), AfterValidator(_storable_json)]

_PLAIN_KEY = re.compile(r"^[\w-]+$", re.ASCII)


def place(loc: tuple) -> str:
    """`("answers", 3, "features")` -> `answers[3].features`; an odd key is quoted as JSON."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            name = part if _PLAIN_KEY.match(part) else json.dumps(part)
            out += f".{name}" if out else name
    return out


def describe(error: ErrorDetails) -> str:
    """One pydantic error in the project's words (the place is said separately)."""
    kind, value, limits = error["type"], error.get("input"), error.get("ctx") or {}
    match kind:
        case "missing":
            return "is required"
        case "string_type":
            return "is required" if value is None else f"must be text, not {type(value).__name__}"
        case "int_type":
            return f"must be a whole number, not {shown(value)}"
        case "greater_than_equal":
            return f"must be a whole number of at least {limits['ge']}, not {shown(value)}"
        case "float_type":
            return f"must be a number, not {shown(value)}"
        case "bool_type":
            return f"must be true or false, not {shown(value)}"
        case "dict_type" | "model_type" | "model_attributes_type":
            return "must be an object"
        case "list_type":
            return "must be a list"
        case "extra_forbidden":
            return "unknown key"
    message = error["msg"]  # our own errors are in words already; pydantic's start with a capital
    return message[:1].lower() + message[1:]


def sentence(message: str) -> str:
    """A message as a sentence on a form: capital first letter, full stop."""
    message = message[0].upper() + message[1:] if message else message
    return message if message.endswith((".", "?", "!")) else message + "."
