"""Comparisons collapsed into binomial rows (unordered pair, order sign, covariates)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Grouped:
    """Comparisons collapsed into binomial rows: `wins` of item `a` over item `b` (a < b)."""

    a: np.ndarray
    b: np.ndarray
    extra: np.ndarray  # (rows, p) columns for the order effect and covariates, a's side
    wins: np.ndarray
    totals: np.ndarray
    row_of_comparison: np.ndarray | None  # which row each input comparison landed in (None: from a count table)


def order_signs(winners: np.ndarray, losers: np.ndarray, first: np.ndarray | None) -> np.ndarray:
    """z = +1 if the winner was shown first, -1 if the loser was, 0 if unknown."""
    if first is None:
        return np.zeros(len(winners), dtype=np.int64)
    first = np.asarray(first)
    return np.where(first == winners, 1, np.where(first == losers, -1, 0))


def count_table(winners, losers, n_items, *, counts=None, signs=None) -> np.ndarray:
    """(n, n, 3) wins of the row item over the column item, by z (-1, 0, +1) from the winner's side.

    One bincount over the comparisons; everything after it costs O(n_items^2)."""
    key = winners * n_items + losers
    if signs is None:
        table = np.zeros((n_items, n_items, 3))
        table[:, :, 1] = np.bincount(key, counts, minlength=n_items * n_items).reshape(n_items, n_items)
        return table
    flat = np.bincount(key * 3 + (signs + 1), counts, minlength=n_items * n_items * 3)
    return flat.reshape(n_items, n_items, 3).astype(float)


def group_table(table: np.ndarray) -> Grouped:
    """Binomial rows (a < b, z from a's side) from a count table; no per-comparison map."""
    upper_a, upper_b = np.triu_indices(table.shape[0], k=1)
    wins = table[upper_a, upper_b]
    losses = table[upper_b, upper_a, ::-1]  # b won with z = s from its side, i.e. -s from a's
    totals = wins + losses
    pair, sign_index = np.nonzero(totals > 0)
    extra = (sign_index - 1.0)[:, None]
    if not extra.any():
        extra = np.zeros((len(pair), 0))
    a, b = upper_a[pair], upper_b[pair]
    return Grouped(a, b, extra, wins[pair, sign_index], totals[pair, sign_index], None)


def group_comparisons(
    winners: np.ndarray,
    losers: np.ndarray,
    n_items: int,
    *,
    counts: np.ndarray | None = None,
    signs: np.ndarray | None = None,
    covariates: np.ndarray | None = None,
) -> Grouped:
    """Binomial rows keyed by (pair, order sign, covariates), with each comparison's row."""
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    if covariates is not None:
        return _group_with_covariates(
            winners, losers, n_items=n_items, counts=counts, signs=signs, covariates=covariates
        )
    grouped = group_table(count_table(winners, losers, n_items, counts=counts, signs=signs))
    sign = grouped.extra[:, 0].astype(np.int64) if grouped.extra.shape[1] else 0
    lookup = np.full(n_items * n_items * 3, -1)
    lookup[(grouped.a * n_items + grouped.b) * 3 + sign + 1] = np.arange(len(grouped.a))
    a, b = np.minimum(winners, losers), np.maximum(winners, losers)
    a_side = 0 if signs is None else np.where(winners == a, signs, -signs)
    rows = lookup[(a * n_items + b) * 3 + a_side + 1]
    return Grouped(grouped.a, grouped.b, grouped.extra, grouped.wins, grouped.totals, rows)


def _group_with_covariates(
    winners: np.ndarray,
    losers: np.ndarray,
    *,
    n_items: int,
    counts: np.ndarray | None,
    signs: np.ndarray | None,
    covariates: np.ndarray,
) -> Grouped:
    counts = np.ones(len(winners)) if counts is None else np.asarray(counts, float)
    signs = np.zeros(len(winners), np.int64) if signs is None else np.asarray(signs, np.int64)
    a, b = np.minimum(winners, losers), np.maximum(winners, losers)
    a_won = winners == a
    # Columns are stated from a's side: flip sign when a is the loser.
    flip = np.where(a_won, 1, -1)
    pair_key = (a * n_items + b) * 3 + (signs * flip + 1)
    extra_cols = np.asarray(covariates, float).reshape(len(winners), -1) * flip[:, None]
    rows, inverse = np.unique(np.column_stack([pair_key, extra_cols]), axis=0, return_inverse=True)
    rows, inverse = rows[:, 0].astype(np.int64), inverse.ravel()
    n_rows = len(rows)
    wins = np.bincount(inverse, counts * a_won, minlength=n_rows)
    totals = np.bincount(inverse, counts, minlength=n_rows)
    pair, sign = rows // 3, rows % 3 - 1
    extra = _first_per_row(inverse, extra_cols, n_rows)
    if signs.any():
        extra = np.column_stack([sign.astype(float), extra])
    return Grouped(pair // n_items, pair % n_items, extra, wins, totals, inverse)


def _first_per_row(inverse: np.ndarray, values: np.ndarray, n_rows: int) -> np.ndarray:
    out = np.zeros((n_rows, values.shape[1]))
    out[inverse] = values  # identical within a row by construction
    return out
