"""Reading comparison CSV files (`winner,loser[,n][,first][,set]`) into arrays for bradley_terry."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


class ComparisonFileError(ValueError):
    """The file cannot be read as comparisons; the message says where and why."""


@dataclass(frozen=True)
class Comparisons:
    """Items are numbered in sorted name order (as R's factor levels are)."""

    item_names: list[str]
    winners: np.ndarray
    losers: np.ndarray
    counts: np.ndarray | None  # None when the file has no `n` column
    first: np.ndarray | None  # item shown first, -1 when blank; None without the column
    clusters: dict[str, np.ndarray] = field(default_factory=dict)  # column -> each row's cluster, coded 0..G-1
    sets: np.ndarray | None = None  # each row's vignette set (the `set` column, as written); None without it

    def index_of(self, name: str) -> int:
        if name not in self.item_names:
            known = ", ".join(self.item_names)
            raise ComparisonFileError(f"'{name}' is not an item in the file (items: {known}).")
        return self.item_names.index(name)


def read_comparisons(
    path: str | Path, *, first_column: str = "first", cluster_columns: tuple[str, ...] = ()
) -> Comparisons:
    """Parse a comparison CSV; `first_column` names the shown-first column (e.g. `home`), `cluster_columns`
    the columns whose values cluster the rows (a judge, a vignette)."""
    rows = _read_rows(Path(path))
    clusters = {column: _cluster_labels(rows, column, path) for column in cluster_columns}
    names = sorted({row["winner"] for row in rows} | {row["loser"] for row in rows})
    index = {name: k for k, name in enumerate(names)}
    winners = np.array([index[row["winner"]] for row in rows], dtype=np.int64)
    losers = np.array([index[row["loser"]] for row in rows], dtype=np.int64)
    counts = _counts(rows) if "n" in rows[0] else None
    first = _first(rows, index, first_column) if first_column in rows[0] else None
    sets = _sets(rows, path) if "set" in rows[0] else None
    return Comparisons(names, winners, losers, counts, first, clusters, sets)


def _sets(rows: list[dict[str, str]], path) -> np.ndarray:
    for line, row in enumerate(rows, start=2):
        if not row["set"]:
            raise ComparisonFileError(f"{path}, line {line}: the set column is blank (name every row's vignette set).")
    return np.array([row["set"] for row in rows])


def _cluster_labels(rows: list[dict[str, str]], column: str, path) -> np.ndarray:
    if column not in rows[0]:
        raise ComparisonFileError(f"{path}: no column {column!r} to cluster on (columns: {', '.join(rows[0])}).")
    for line, row in enumerate(rows, start=2):
        if not row[column]:
            raise ComparisonFileError(f"{path}, line {line}: the cluster column {column!r} is blank.")
    return np.unique([row[column] for row in rows], return_inverse=True)[1].ravel()


def _read_rows(path: Path) -> list[dict[str, str]]:
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            missing = {"winner", "loser"} - set(reader.fieldnames or [])
            if missing:
                raise ComparisonFileError(
                    f"{path}: missing column(s) {', '.join(sorted(missing))}; "
                    "expected a header winner,loser[,n][,first]."
                )
            rows = [{key: (value or "").strip() for key, value in row.items()} for row in reader]
    except OSError as exc:
        raise ComparisonFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ComparisonFileError(f"{path} is not a UTF-8 text file.") from exc
    if not rows:
        raise ComparisonFileError(f"{path} has a header but no comparisons.")
    for line, row in enumerate(rows, start=2):
        if not row["winner"] or not row["loser"]:
            raise ComparisonFileError(f"{path}, line {line}: winner and loser are required.")
        if row["winner"] == row["loser"]:
            raise ComparisonFileError(f"{path}, line {line}: an item cannot beat itself.")
    return rows


def _counts(rows: list[dict[str, str]]) -> np.ndarray:
    counts = []
    for line, row in enumerate(rows, start=2):
        try:
            value = float(row["n"])
        except ValueError:
            value = -1.0
        if value < 0 or value != int(value):
            raise ComparisonFileError(f"line {line}: n must be a whole number >= 0, not {row['n']!r}.")
        counts.append(value)
    return np.array(counts)


def _first(rows: list[dict[str, str]], index: dict[str, int], column: str) -> np.ndarray:
    first = []
    for line, row in enumerate(rows, start=2):
        shown = row[column]
        if shown and shown not in (row["winner"], row["loser"]):
            raise ComparisonFileError(f"line {line}: {column} must be the winner or the loser, not {shown!r}.")
        first.append(index[shown] if shown else -1)
    return np.array(first, dtype=np.int64)
