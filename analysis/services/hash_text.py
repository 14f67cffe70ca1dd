"""The text a refit's data hash is taken over: one line "id:winner" per judgment, built by numpy."""

from __future__ import annotations

import numpy as np

# "0000" .. "9999" as ASCII: a number's digits four at a time, one division by 10,000 per four.
_FOUR_DIGITS = np.frombuffer("".join(f"{k:04d}" for k in range(10_000)).encode(), np.uint8).reshape(10_000, 4)


def decimal_lines(ids: np.ndarray, winners: np.ndarray) -> bytes:
    """b"".join(f"{id}:{winner}\\n" for each row), built by numpy: the data hash's text, as it always was."""
    if len(ids) == 0:
        return b""
    ids, winners = np.asarray(ids, np.int64), np.asarray(winners, np.int64)
    if (ids < 0).any() or (winners < 0).any():
        raise ValueError("ids are never negative.")
    left, right = len(str(int(ids.max()))), len(str(int(winners.max())))
    text = np.empty((len(ids), left + right + 2), np.uint8)
    written = np.ones(text.shape, bool)
    _write_digits(ids, text[:, :left], written[:, :left])
    text[:, left] = ord(":")
    _write_digits(winners, text[:, left + 1 : -1], written[:, left + 1 : -1])
    text[:, -1] = ord("\n")
    return text.tobytes() if written.all() else text[written].tobytes()


def _write_digits(values: np.ndarray, text: np.ndarray, written: np.ndarray) -> None:
    """The ASCII digits of `values` right-aligned in `text` (rows x width), and in `written` which of them
    are written (not leading zeros; a zero writes its one digit)."""
    width = text.shape[1]
    rest = values
    for end in range(width, 0, -4):
        rest, four = np.divmod(rest, 10_000)
        begin = max(0, end - 4)
        text[:, begin:end] = _FOUR_DIGITS[four, 4 - (end - begin) :]
    lengths = np.searchsorted(10 ** np.arange(1, width, dtype=np.int64), values, side="right") + 1
    if lengths.min() < width:
        np.greater_equal(np.arange(width), (width - lengths)[:, None], out=written)
