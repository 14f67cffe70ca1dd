"""Distinct labels (judges, vignettes, cells) of integer arrays, as np.unique gives them, without sorting.

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
