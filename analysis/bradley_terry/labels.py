"""Distinct labels (judges, vignettes, cells) and rows of integer arrays, as np.unique gives them, without sorting.

The refit numbers ten million judgments' judges and vignettes dozens of times (every interval, resample
and diagnostic); np.unique sorts (or hashes) each time, about 0.1–0.6 s per call at that size. Judges'
and vignettes' ids are dense integers, so a table over their range gives the same sorted values and
inverse in one pass. Other arrays (sparse, non-integer) go to np.unique.
"""

import numpy as np


def _dense_range(values: np.ndarray) -> tuple[int, int] | None:
    """(low, high) when `values` are integers whose range is small enough for a table; otherwise None."""
    if values.ndim != 1 or len(values) == 0 or not np.issubdtype(values.dtype, np.integer):
        return None
    low, high = int(values.min()), int(values.max())
    return (low, high) if high - low <= 4 * len(values) + 1024 else None


def distinct(values) -> np.ndarray:
    """np.unique(values): the sorted distinct values."""
    values = np.asarray(values)
    bounds = _dense_range(values)
    if bounds is None:
        return np.unique(values)
    low, high = bounds
    present = np.zeros(high - low + 1, bool)
    present[values - low] = True
    return (np.flatnonzero(present) + low).astype(values.dtype)


def count_distinct(values) -> int:
    """len(np.unique(values))."""
    return len(distinct(values))


def codes(values, dtype=np.intp) -> np.ndarray:
    """np.unique(values, return_inverse=True)[1].ravel(): each value's rank among the distinct values."""
    values = np.asarray(values)
    bounds = _dense_range(values)
    if bounds is None:
        return np.unique(values, return_inverse=True)[1].ravel().astype(dtype, copy=False)
    low, high = bounds
    present = np.zeros(high - low + 1, bool)
    present[values - low] = True
    code_of = np.cumsum(present, dtype=dtype)
    code_of -= 1
    return code_of[values - low]


def positions(sorted_values: np.ndarray, values) -> np.ndarray:
    """Each value's position in `sorted_values` (distinct, ascending), -1 where it is not one of them: a
    checked np.searchsorted, through a table over their range when they are dense integers (ten million
    judgments' judges looked up among 400,000: one pass instead of a binary search each)."""
    sorted_values, values = np.asarray(sorted_values), np.asarray(values)
    if not len(sorted_values):
        return np.full(len(values), -1, np.intp)
    bounds = _dense_range(sorted_values)
    if bounds is not None and np.issubdtype(values.dtype, np.integer):
        low, high = bounds
        table = np.full(high - low + 2, -1, np.intp)  # the last entry: any value outside the range
        table[sorted_values - low] = np.arange(len(sorted_values))
        offsets = values - low
        return table[np.where((offsets >= 0) & (offsets <= high - low), offsets, high - low + 1)]
    at = np.minimum(np.searchsorted(sorted_values, values), len(sorted_values) - 1)
    return np.where(sorted_values[at] == values, at, -1)


def distinct_rows(key) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(key, axis=0, return_inverse=True), the inverse raveled, for a 2-D integer array: its rows as one
    integer each (mixed radix over the columns' ranges, which keeps np.unique's lexicographic order), then `distinct`
    and `codes`. np.unique sorts whole rows: 1 s for two columns of 300,000 rows, called on every refit of the
    headline test that fragility makes. Other arrays, or ranges too wide for one int64, go to np.unique."""
    key = np.asarray(key)
    if key.ndim != 2 or not len(key) or not key.shape[1] or not np.issubdtype(key.dtype, np.integer):
        rows, inverse = np.unique(key, axis=0, return_inverse=True)
        return rows, inverse.ravel()
    low = key.min(axis=0).astype(np.int64)
    spans = [int(high) - int(lowest) + 1 for lowest, high in zip(low, key.max(axis=0), strict=True)]
    if np.prod(np.array(spans, dtype=float)) >= 2**62:
        rows, inverse = np.unique(key, axis=0, return_inverse=True)
        return rows, inverse.ravel()
    combined = np.zeros(len(key), np.int64)
    for column, span in enumerate(spans):
        combined = combined * span + (key[:, column].astype(np.int64) - low[column])
    values = distinct(combined)
    rows = np.empty((len(values), len(spans)), key.dtype)
    for column in reversed(range(len(spans))):
        rows[:, column] = values % spans[column] + low[column]
        values = values // spans[column]
    return rows, codes(combined)
