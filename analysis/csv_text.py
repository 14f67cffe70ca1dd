"""Every CSV file the platform hands out is written by `csv_lines` (streamed) or `to_csv` (its text), so
every cell passes `csv_cell`."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator

# A cell starting with one of these is run as a formula by Excel, LibreOffice or Google Sheets (OWASP,
# "CSV Injection"): a participant's "=cmd|' /C calc'!A0" typed as their religion must arrive as text.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """What one CSV cell holds: None is empty, a string that a spreadsheet would run gets a leading '.

    Only strings are escaped, so numbers (negative estimates) stay numbers in the file. A carriage
    return inside a string becomes a newline: the csv module (lines end in \\n here) would leave it
    unquoted, and readers would split the row there.
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        return value
    if value.startswith(FORMULA_STARTS):
        value = "'" + value
    return value.replace("\r\n", "\n").replace("\r", "\n")


def csv_lines(columns: list[str], rows: Iterable[dict]) -> Iterator[str]:
    """A CSV file one line at a time (header first), for a streamed response: memory stays one row.

    Rows are dicts, keys outside `columns` are left out.
    """
    line = _LineBuffer()
    writer = csv.DictWriter(line, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    yield line.take()
    for row in rows:
        writer.writerow({key: csv_cell(row.get(key)) for key in columns})
        yield line.take()


def to_csv(columns: list[str], rows: Iterable[dict]) -> str:
    """A CSV file with a header row, as one text (the same text `csv_lines` streams)."""
    return "".join(csv_lines(columns, rows))


class _LineBuffer:
    """What the csv writer writes to: holds the last row until `take` hands it on."""

    def __init__(self):
        self.parts: list[str] = []

    def write(self, text: str) -> None:
        self.parts.append(text)

    def take(self) -> str:
        text, self.parts = "".join(self.parts), []
        return text
