"""Every CSV file the platform hands out is written by `to_csv`, so every cell passes `csv_cell`."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

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


def to_csv(columns: list[str], rows: Iterable[dict]) -> str:
    """A CSV file with a header row; rows are dicts, keys outside `columns` are left out."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: csv_cell(row.get(key)) for key in columns})
    return out.getvalue()
