"""Reading a study file: from JSON text to a checked `StudyFile`, or every problem with its place.

Three passes, each reporting every problem it finds: the JSON text itself (syntax, a key given twice,
nesting no study needs), the shape of each value (`format.py`, against the database fields), then
what refers to what (duplicate keys, answers of unknown systems, the reference system).
"""

import difflib
import json
import re
from itertools import accumulate
from typing import Any

from django.conf import settings
from pydantic import BaseModel

from ..shape_basics import ShapeError, describe, is_storable, place
from .format import SETTING_BLOCKS, StudyFile

MAX_NESTING = 64  # a study file needs 5 levels (answers[i].features[j]); system parameters a few more


class StudyFileError(Exception):
    """A study file that cannot be imported; `errors` name each problem's place in the file."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("\n".join(errors))


def read_study_upload(raw: bytes) -> dict:
    """The JSON object of a file as read or uploaded: its size is checked before it is decoded or parsed."""
    check_file_size(len(raw))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StudyFileError([f"byte {exc.start}: not UTF-8 text"]) from exc
    return parse_study_file(text)


def check_file_size(size: int) -> None:
    """Raises StudyFileError when a file of `size` bytes is over STUDY_FILE_MAX_BYTES."""
    limit = settings.STUDY_FILE_MAX_BYTES
    if size > limit:
        raise StudyFileError(
            [f"the file is {size:,} bytes, more than the {limit:,} a study file may have (STUDY_FILE_MAX_BYTES)"]
        )


def parse_study_file(text: str) -> dict:
    """The file's JSON object; a JSON key given twice is an error (json would silently keep the last)."""
    if len(text) * 4 > settings.STUDY_FILE_MAX_BYTES:  # at most 4 bytes a character: encode only when it may matter
        check_file_size(len(text.encode("utf-8", "surrogatepass")))
    repeated: dict[int, list[str]] = {}  # id of a parsed object -> its keys given more than once

    def object_noting_repeats(pairs: list[tuple[str, Any]]) -> dict:
        result: dict = {}
        for key, value in pairs:
            if key in result:
                repeated.setdefault(id(result), []).append(key)
            result[key] = value
        return result

    too_deep = _nesting_beyond(text, MAX_NESTING)
    if too_deep:  # json would recurse until Python's stack gives out
        line, column = too_deep
        raise StudyFileError([f"line {line} column {column}: nested more than {MAX_NESTING} levels deep"])
    try:
        data = json.loads(text, object_pairs_hook=object_noting_repeats)
    except json.JSONDecodeError as exc:
        raise StudyFileError([f"line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg})"]) from exc
    except ValueError as exc:  # a number of more than 4,300 digits, which Python will not read
        raise StudyFileError([f"not valid JSON ({str(exc).split(':')[0]})"]) from exc
    if not isinstance(data, dict):
        raise StudyFileError(["the file must hold one JSON object"])
    if repeated:
        raise StudyFileError(_repeated_keys(data, repeated))
    return data


# What the nesting scan looks at: a whole string (skipped: brackets inside it do not count), a bracket, a line end.
# A string runs to its closing quote or the end of the text, so the scan never backtracks (linear on any input);
# json reads strings by stricter rules and stops at the first one it refuses, before anything the scan skipped.
_STRING = r'"(?:[^"\\]|\\[\s\S])*"?'
_STRUCTURE, _STRINGS, _NOT_BRACKETS = (
    re.compile(_STRING + r"|[\[\]{}\n]"),
    re.compile(_STRING),
    re.compile(r"[^\[\]{}]+"),
)


def _nesting_beyond(text: str, most: int) -> tuple[int, int] | None:
    """Line and column where lists and objects nest deeper than `most`, outside strings; else None.

    The usual answer (None) comes from the brackets alone, found by regular expressions; a character loop in Python
    took seconds on a 5 MB file. Only a file nested too deep is walked token by token to say where.
    """
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    if max(accumulate(1 if char in "[{" else -1 for char in brackets), default=0) <= most:
        return None
    depth, line, line_start = 0, 1, -1
    for token in _STRUCTURE.finditer(text):
        char = token.group()
        if char in "[{":
            depth += 1
            if depth > most:
                return line, token.start() - line_start
        elif char in "]}":
            depth -= 1
        elif char == "\n":
            line, line_start = line + 1, token.start()
    return None


def _too_many_items(data: dict) -> list[str]:
    """Each list or object holding more than STUDY_FILE_MAX_ITEMS items, by its place."""
    limit, errors = settings.STUDY_FILE_MAX_ITEMS, []
    pending: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]  # lists and objects only
    while pending:  # not recursive: the data may be deep
        value, loc = pending.pop()
        if len(value) > limit:
            what = "keys" if isinstance(value, dict) else "items"
            where = _place_in_file(loc, unknown=True) if loc else "the file"
            errors.append(
                f"{where}: {len(value):,} {what}, more than the {limit:,} a study file may hold (STUDY_FILE_MAX_ITEMS)"
            )
            continue  # its items are not looked at: one error for a list of 100,000
        children = value.items() if isinstance(value, dict) else enumerate(value)
        pending.extend((child, (*loc, key)) for key, child in children if isinstance(child, dict | list))
    return sorted(errors)


def _repeated_keys(data: dict, repeated: dict[int, list[str]]) -> list[str]:
    return sorted(
        f"{_place_in_file(loc)}: the key is given more than once (only the last would count)"
        for loc, value in _objects(data)
        for loc in [(*loc, key) for key in repeated.get(id(value), [])]
    )


def _objects(data: Any):
    """Every JSON object in the data with its location, the top one first (not recursive: data may be deep)."""
    pending: list[tuple[Any, tuple[str | int, ...]]] = [(data, ())]
    while pending:
        value, loc = pending.pop()
        if isinstance(value, dict):
            yield loc, value
            pending.extend((child, (*loc, key)) for key, child in value.items())
        elif isinstance(value, list):
            pending.extend((child, (*loc, index)) for index, child in enumerate(value))


def read_study_file(data: Any) -> StudyFile:
    """The checked study file; StudyFileError lists every problem, each with its place."""
    if not isinstance(data, dict):
        raise StudyFileError(["the file must hold one JSON object"])
    crowded = _too_many_items(data)
    if crowded:  # before the shapes are checked: a list of 100,000 questions is refused without reading each
        raise StudyFileError(crowded)
    odd_keys = [
        _place_in_file((*loc, key), unknown=True)
        for loc, value in _objects(data)
        for key in value
        if not is_storable(key)
    ]
    if odd_keys:  # pydantic cannot read such a key at all, so name it before the shapes are checked
        raise StudyFileError([f"{where}: a key must be Unicode text without NUL characters" for where in odd_keys])
    try:
        study_file = StudyFile.model_validate(data)
    except ShapeError as error:
        raise StudyFileError([_in_words(problem, data) for problem in error.errors()]) from None
    errors = _reference_errors(study_file)
    if errors:
        raise StudyFileError(errors)
    return study_file


def check_study_file(data: Any) -> list[str]:
    """Every problem in the file, each naming its place; an empty list means it can be imported."""
    try:
        read_study_file(data)
    except StudyFileError as exc:
        return exc.errors
    return []


def _in_words(problem, data: dict) -> str:
    loc = tuple(problem["loc"])
    message = describe(problem)
    if problem["type"] == "weights_total" and loc[:1] == ("answers",):
        message += _weights_in_words(data["answers"][loc[1]], problem["input"], problem["ctx"])
    if problem["type"] == "extra_forbidden":
        known = _keys_of(_object_at(loc[:-1]))
        what = "setting" if len(loc) == 2 and loc[0] in SETTING_BLOCKS else "key"
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        message = f"unknown {what} ({f'did you mean {close[0]!r}?' if close else 'known: ' + ', '.join(known)})"
    return f"{_place_in_file(loc, unknown=problem['type'] == 'extra_forbidden')}: {message}"


def _weights_in_words(answer: dict, features: list[dict], ctx: dict) -> str:
    """Which answer, and which weights make its total: no one feature is wrong when the sum is."""
    terms = " + ".join(f"{feature['weight']} ({feature['feature']})" for feature in features)
    return (
        f", in the answer of system '{answer['system']}' to vignette '{answer['vignette']}'"
        f" (sample {answer.get('sample', 1)}): {terms} = {ctx['total']}."
        f" Change the weights in this features list so that they add up to {ctx['target']}"
    )


def _place_in_file(loc: tuple, *, unknown: bool = False) -> str:
    """The study's own values are named `study.…`; blocks and lists by their key (`design.order`, `answers[3]`)."""
    if len(loc) == 1 and not unknown and _object_at(loc) is None:
        loc = ("study", *loc)
    return place(loc) or "study"


def _keys_of(shape) -> list[str]:
    return [field.alias or name for name, field in shape.__pydantic_fields__.items()] if shape else []


def _object_at(loc: tuple):
    """The model of the object at this place in the file, or None where the value is not an object."""
    shape: type[BaseModel] = StudyFile
    for part in loc:
        if isinstance(part, int):
            continue  # an item of a list: the list's field already named the item's model
        fields = {field.alias or name: field for name, field in shape.__pydantic_fields__.items()}
        found = _model_in(fields[part].annotation) if part in fields else None
        if found is None:
            return None
        shape = found
    return shape


def _model_in(annotation):
    if isinstance(annotation, type) and hasattr(annotation, "__pydantic_fields__"):
        return annotation
    for argument in getattr(annotation, "__args__", ()):
        found = _model_in(argument)
        if found:
            return found
    return None


def _reference_errors(study_file: StudyFile) -> list[str]:
    errors: list[str] = []
    keys: dict[str, set[str]] = {}
    for name in ("questions", "vignettes", "systems"):
        keys[name] = set()
        for index, item in enumerate(getattr(study_file, name)):
            if item.key in keys[name]:
                errors.append(f"{name}[{index}].key: duplicate key '{item.key}'")
            keys[name].add(item.key)
    if study_file.reference_system not in keys["systems"]:
        errors.append(f"study.reference_system: '{study_file.reference_system}' is not one of the study's systems")
    seen, selected = set(), set()
    for index, answer in enumerate(study_file.answers):
        where, pair = f"answers[{index}]", (answer.system, answer.vignette)
        if answer.system not in keys["systems"]:
            errors.append(f"{where}.system: unknown system '{answer.system}'")
        if answer.vignette not in keys["vignettes"]:
            errors.append(f"{where}.vignette: unknown vignette '{answer.vignette}'")
        if (*pair, answer.sample) in seen:
            errors.append(
                f"{where}: duplicate answer for system '{pair[0]}', vignette '{pair[1]}', sample {answer.sample}"
            )
        seen.add((*pair, answer.sample))
        if answer.selected:
            if pair in selected:
                errors.append(f"{where}.selected: a second selected answer for '{pair[0]}' on '{pair[1]}'")
            selected.add(pair)
    return errors
