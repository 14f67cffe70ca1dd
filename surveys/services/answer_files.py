"""Answers from a spreadsheet (CSV), in either of two layouts (docs/study-files.md, *Answers from a CSV file*).

- **one row per feature**: columns `system`, `vignette`, `feature`, `weight`, `reason` (and optionally
  `sample`, `action`, `additional_information`, `selected`); the rows of one system × vignette × sample
  are one answer, its features in row order;
- **one row per answer**: `system`, `vignette`, then `feature_1`, `weight_1`, `reason_1` up to
  `feature_5`, `weight_5`, `reason_5` (and the optional columns above).

Every answer is checked by the one answer shape (answer_shape.py) and against the study's systems and
vignettes; each problem names its row and column. An import is all or nothing, and only into a draft.
"""

import csv
import io
import re
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction

from ..models import MAX_FEATURES, Answer, Study
from .answer_records import replace_features, select_answer
from .freezing import is_frozen
from .shape_basics import ShapeError, describe
from .study_files.format import AnswerEntry

KEY_COLUMNS = ("system", "vignette", "sample")
ANSWER_COLUMNS = ("action", "additional_information", "selected")
FEATURE_COLUMNS = ("feature", "weight", "reason")
NUMBERED = re.compile(r"^(feature|weight|reason)_([1-9]\d*)$")
YES, NO = {"yes", "true", "1", "y", "x"}, {"", "no", "false", "0", "n"}
# Checked before any work, like a study file's limits (STUDY_FILE_MAX_ITEMS answers): a cell, the columns, the rows.
MAX_CELL_CHARACTERS = 20_000  # a reason or an action is a few sentences
MAX_COLUMNS = len(KEY_COLUMNS + ANSWER_COLUMNS) + len(FEATURE_COLUMNS) * (MAX_FEATURES + 1)


class AnswerFileError(Exception):
    """An answers file that cannot be imported; `errors` name each problem's row and column."""

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("\n".join(errors))


@dataclass
class AnswerRows:
    """One answer as read from the file: its values, and the row holding each (for the error's place)."""

    values: dict
    rows: list[int] = field(default_factory=list)  # the file's line numbers, header = 1
    feature_places: list[tuple[int, str]] = field(default_factory=list)  # (row, column suffix) per feature

    def where(self) -> str:
        rows = sorted(set(self.rows))
        return f"row {rows[0]}" if len(rows) == 1 else f"rows {rows[0]}–{rows[-1]}"


@dataclass(frozen=True)
class ImportedAnswers:
    created: int
    updated: int


def read_answer_file(text: str) -> list[AnswerRows]:
    """The answers the CSV text holds, each checked; AnswerFileError lists every problem with its place."""
    text = text.removeprefix("\ufeff")  # a spreadsheet's UTF-8 byte-order mark
    if not text.strip():
        raise AnswerFileError(["the file is empty: its first row names the columns"])
    dialect = _dialect(text)
    reader = csv.reader(io.StringIO(text), dialect)
    header = [name.strip().lower().replace(" ", "_") for name in _next_row(reader, 1)]
    if len(header) > MAX_COLUMNS:
        raise AnswerFileError([f"row 1: {len(header):,} columns, more than the {MAX_COLUMNS} an answers file has"])
    _check_header(header)
    max_answers = settings.STUDY_FILE_MAX_ITEMS
    max_rows = max_answers * (MAX_FEATURES if "feature" in header else 1)
    rows = []
    for number in range(2, max_rows + 3):
        cells = _next_row(reader, number)
        if cells is None:
            break
        if number > max_rows + 1:
            raise AnswerFileError(
                [f"more than {max_rows:,} rows: an answers file holds at most {max_answers:,} answers "
                 "(STUDY_FILE_MAX_ITEMS, as a study file)"]
            )  # fmt: skip
        if len(cells) > MAX_COLUMNS:
            raise AnswerFileError([f"row {number}: {len(cells):,} cells, more than the {MAX_COLUMNS} columns"])
        rows.append((number, dict(zip(header, cells, strict=False))))
    rows = [(number, row) for number, row in rows if any((v or "").strip() for v in row.values())]
    answers = _per_feature(rows) if "feature" in header else _per_answer(rows)
    if len(answers) > max_answers:
        raise AnswerFileError(
            [f"{len(answers):,} answers, more than the {max_answers:,} a file may hold (STUDY_FILE_MAX_ITEMS)"]
        )
    errors = [error for answer in answers for error in _shape_errors(answer)]
    if errors:
        raise AnswerFileError(errors)
    if not answers:
        raise AnswerFileError(["the file has no answers: only its header row"])
    return answers


def _next_row(reader, number: int):
    """The next row (None at the end); a cell over MAX_CELL_CHARACTERS, or one the csv module refuses (a quote left
    open, a cell over its own limit), is an AnswerFileError naming the row."""
    try:
        cells = next(reader, None)
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise AnswerFileError(
                [f"row {number}: a cell holds more than {MAX_CELL_CHARACTERS:,} characters"]
            ) from None
        raise AnswerFileError([f"row {number}: not readable as CSV ({exc})"]) from None
    if cells is not None and number > 1 and any(len(cell) > MAX_CELL_CHARACTERS for cell in cells):
        raise AnswerFileError([f"row {number}: a cell holds more than {MAX_CELL_CHARACTERS:,} characters"])
    if cells is not None and number == 1 and any(len(cell) > 100 for cell in cells):
        raise AnswerFileError(["row 1: a column name is longer than 100 characters"])
    return cells if cells is not None or number > 1 else []


def _dialect(text: str) -> type[csv.Dialect] | csv.Dialect:
    # Spreadsheets save with commas, semicolons (where the comma is the decimal mark) or tabs.
    try:
        return csv.Sniffer().sniff(text[:4096].splitlines()[0], delimiters=",;\t")
    except csv.Error:
        return csv.excel


def _check_header(header: list[str]) -> None:
    errors = []
    missing = [name for name in ("system", "vignette") if name not in header]
    if missing:
        errors.append("row 1: missing column " + ", ".join(f"'{name}'" for name in missing))
    numbered = [name for name in header if NUMBERED.match(name)]
    if "feature" in header and numbered:
        errors.append(
            "row 1: give either 'feature', 'weight', 'reason' (one row per feature) or 'feature_1', … (one row per answer), not both"
        )
    elif "feature" not in header and not numbered:
        errors.append(
            "row 1: no feature columns: 'feature', 'weight', 'reason' (one row per feature) or 'feature_1', 'weight_1', 'reason_1', … (one row per answer)"
        )
    known = set(KEY_COLUMNS + ANSWER_COLUMNS + FEATURE_COLUMNS)
    for name in header:
        if name not in known and not NUMBERED.match(name):
            errors.append(f"row 1: unknown column '{name}' (known: {', '.join(sorted(known))}, feature_1 …)")
        elif (match := NUMBERED.match(name)) and int(match.group(2)) > MAX_FEATURES:
            errors.append(f"row 1: column '{name}': an answer has at most {MAX_FEATURES} features")
    if len(set(header)) != len(header):
        errors.append("row 1: a column is named twice")
    if errors:
        raise AnswerFileError(errors)


def _cell(row: dict, name: str) -> str:
    return (row.get(name) or "").strip()


def _number(text: str) -> int | str:
    """A whole number when the cell holds one; else the text as it is, for the shape to name."""
    return int(text) if re.fullmatch(r"-?\d+", text) else text


def _answer_key(row: dict) -> tuple:
    return (_cell(row, "system"), _cell(row, "vignette"), _number(_cell(row, "sample") or "1"))


def _base(row: dict) -> dict:
    system, vignette, sample = _answer_key(row)
    selected = _cell(row, "selected").lower()
    return {
        "system": system,
        "vignette": vignette,
        "sample": sample,
        "action": _cell(row, "action"),
        "additional_information": _cell(row, "additional_information"),
        "selected": True if selected in YES else False if selected in NO else selected,
        "features": [],
    }


def _feature(row: dict, suffix: str = "") -> dict:
    return {
        "feature": _cell(row, f"feature{suffix}"),
        "weight": _number(_cell(row, f"weight{suffix}")),
        "reason": _cell(row, f"reason{suffix}"),
    }


def _per_feature(rows: list[tuple[int, dict]]) -> list[AnswerRows]:
    answers: dict[tuple, AnswerRows] = {}
    for number, row in rows:
        answer = answers.setdefault(_answer_key(row), AnswerRows(values=_base(row)))
        answer.rows.append(number)
        for name in ("action", "additional_information"):  # given on any one row of the answer, or on each alike
            value = _cell(row, name)
            if value and answer.values[name] and value != answer.values[name]:
                answer.values.setdefault("_conflicts", []).append(
                    f"row {number}, {name}: differs from an earlier row of this answer"
                )
            answer.values[name] = answer.values[name] or value
        answer.values["features"].append(_feature(row))
        answer.feature_places.append((number, ""))
    return list(answers.values())


def _per_answer(rows: list[tuple[int, dict]]) -> list[AnswerRows]:
    answers: list[AnswerRows] = []
    seen: dict[tuple, int] = {}
    for number, row in rows:
        answer = AnswerRows(values=_base(row), rows=[number])
        for index in range(1, MAX_FEATURES + 1):
            if any(_cell(row, f"{name}_{index}") for name in FEATURE_COLUMNS):
                answer.values["features"].append(_feature(row, f"_{index}"))
                answer.feature_places.append((number, f"_{index}"))
        key = _answer_key(row)
        if key in seen:
            answer.values.setdefault("_conflicts", []).append(
                f"row {number}: the answer of system '{key[0]}' to vignette '{key[1]}' (sample {key[2]}) is already on row {seen[key]}"
            )
        seen.setdefault(key, number)
        answers.append(answer)
    return answers


def _shape_errors(answer: AnswerRows) -> list[str]:
    values = dict(answer.values)
    errors = values.pop("_conflicts", [])
    try:
        AnswerEntry.model_validate(values)
    except ShapeError as error:
        errors += [f"{_place(answer, problem['loc'])}: {describe(problem)}" for problem in error.errors()]
    return errors


def _place(answer: AnswerRows, loc: tuple) -> str:
    """A shape error's place in the file: the row and column of the cell, or the answer's rows."""
    if len(loc) >= 3 and loc[0] == "features" and isinstance(loc[1], int) and loc[1] < len(answer.feature_places):
        row, suffix = answer.feature_places[loc[1]]
        return f"row {row}, {loc[2]}{suffix}"
    if loc and loc[0] != "features":
        return f"{answer.where()}, {loc[0]}"
    key = answer.values
    return f"{answer.where()} (system '{key['system']}', vignette '{key['vignette']}')"


def _reference_errors(study: Study, answers: list[AnswerRows]) -> list[str]:
    systems = set(study.systems.values_list("key", flat=True))
    vignettes = set(study.vignettes.values_list("key", flat=True))
    errors = []
    for answer in answers:
        for name, known in (("system", systems), ("vignette", vignettes)):
            if answer.values[name] not in known:
                listed = ", ".join(sorted(known)) or "none yet"
                errors.append(
                    f"{answer.where()}, {name}: unknown {name} '{answer.values[name]}' (the study has: {listed})"
                )
    return errors


@transaction.atomic
def import_answers(*, study: Study, text: str, user=None) -> ImportedAnswers:
    """Create or update the file's answers in the draft study (by system × vignette × sample), all or nothing."""
    if is_frozen(study):
        raise AnswerFileError(
            [f"study '{study.slug}' is {study.status}: its answers are fixed once judges have seen them"]
        )
    answers = read_answer_file(text)
    errors = _reference_errors(study, answers)
    if errors:
        raise AnswerFileError(errors)
    systems = {s.key: s for s in study.systems.all()}
    vignettes = {v.key: v for v in study.vignettes.all()}
    created = 0
    for item in answers:
        entry = AnswerEntry.model_validate({k: v for k, v in item.values.items() if not k.startswith("_")})
        fields = {"action": entry.action, "additional_information": entry.additional_information}
        answer, made = Answer.objects.update_or_create(
            system=systems[entry.system],
            vignette=vignettes[entry.vignette],
            sample=entry.sample,
            defaults=fields,
            create_defaults={**fields, "origin": Answer.Origin.IMPORTED},
        )
        replace_features(answer=answer, features=entry.features)
        if entry.selected:
            select_answer(answer=answer, user=user)
        created += made
    return ImportedAnswers(created=created, updated=len(answers) - created)
