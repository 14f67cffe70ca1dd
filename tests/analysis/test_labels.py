"""Labels without sorting give exactly what np.unique gives, whatever the ids look like."""

import numpy as np
import pytest

from analysis.bradley_terry.labels import codes, count_distinct, distinct, distinct_rows, positions

CASES = {
    "dense judges": np.random.default_rng(1).integers(1000, 1400, 5000),
    "sparse ids": np.array([7, 10**12, 3, 7, 10**12, 5]),
    "negative": np.array([-3, 4, -3, 0, 4]),
    "one value": np.full(10, 42),
    "int32 vignettes": np.random.default_rng(2).integers(0, 12, 300).astype(np.int32),
    "empty": np.zeros(0, np.int64),
    "floats": np.array([0.5, 0.25, 0.5]),
    "strings": np.array(["v2", "v1", "v2"]),
}


@pytest.mark.parametrize("name", CASES)
def test_labels_are_np_uniques(name):
    values = CASES[name]
    expected, inverse = np.unique(values, return_inverse=True)
    assert np.array_equal(distinct(values), expected)
    assert distinct(values).dtype == expected.dtype
    assert np.array_equal(codes(values), inverse.ravel())
    assert count_distinct(values) == len(expected)


def test_codes_can_be_narrow():
    values = np.array([30, 10, 20, 10])
    assert codes(values, np.int32).dtype == np.int32
    assert codes(values, np.int32).tolist() == [2, 0, 1, 0]


@pytest.mark.parametrize("name", ["dense judges", "sparse ids", "negative", "one value", "int32 vignettes"])
def test_positions_are_a_checked_searchsorted(name):
    known = np.unique(CASES[name])
    asked = np.concatenate([CASES[name], known - 1, known + 1, [2**62, -(2**62)]]).astype(np.int64)
    expected = np.array([int(np.searchsorted(known, v)) if v in set(known.tolist()) else -1 for v in asked])
    assert np.array_equal(positions(known, asked), expected)
    assert np.array_equal(positions(known[:0], asked), np.full(len(asked), -1))


ROWS = {
    "design rows": np.stack(
        [
            np.random.default_rng(3).integers(0, 12, 4000),
            *np.random.default_rng(4).integers(0, 8, (2, 4000)),
            np.random.default_rng(5).integers(-1, 2, 4000),  # a side: -1, 0 or +1
        ],
        axis=1,
    ),
    "sparse and negative": np.array([[10**12, -5], [3, 7], [10**12, -5], [-(10**12), 0]]),
    "one row": np.array([[4, 2, 1]]),
    "int32": np.random.default_rng(6).integers(0, 5, (50, 3)).astype(np.int32),
    "empty": np.zeros((0, 4), np.int64),
    "floats": np.array([[0.5, 1.0], [0.25, 1.0], [0.5, 1.0]]),
}


@pytest.mark.parametrize("name", ROWS)
def test_distinct_rows_are_np_uniques_rows(name):
    expected, inverse = np.unique(ROWS[name], axis=0, return_inverse=True)
    rows, codes_of_rows = distinct_rows(ROWS[name])
    assert np.array_equal(rows, expected)
    assert rows.dtype == expected.dtype
    assert np.array_equal(codes_of_rows, inverse.ravel())
