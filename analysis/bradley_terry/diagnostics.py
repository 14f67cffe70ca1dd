"""Multiplicity, reliability and order diagnostics, and simulated comparisons."""

from __future__ import annotations

import numpy as np

from .fitting import fit
from .resampling import _refit, cluster_tables
from .results import BTResult


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (nan entries stay nan and do not count)."""
    pvalues = np.asarray(pvalues, float)
    adjusted = np.full(pvalues.shape, np.nan)
    present = np.flatnonzero(np.isfinite(pvalues))
    order = present[np.argsort(pvalues[present], kind="stable")]
    m = len(order)
    stepped = (m - np.arange(m)) * pvalues[order]
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(stepped))
    return adjusted


def centred_abilities(result: BTResult) -> tuple[np.ndarray, np.ndarray]:
    """Abilities centred to mean zero and their SEs, V' = M V M^T (reference-free)."""
    k = len(result.item_names)
    centring = np.eye(k) - 1.0 / k
    covariance = centring @ result.covariance[:k, :k] @ centring.T
    return centring @ result.estimates, np.sqrt(np.clip(np.diag(covariance), 0, None))


def separation_reliability(result: BTResult) -> float:
    """Rasch-style separation reliability (var(est) - mean(se^2)) / var(est).

    Uses centred abilities so that the answer does not depend on the reference item (whose
    reference-coded SE would be an artificial 0); var uses ddof=1. It can be negative when
    the abilities differ less than their noise.
    """
    estimates, se = centred_abilities(result)
    variance = np.var(estimates, ddof=1)
    return float((variance - np.mean(se**2)) / variance)


def split_half_reliability(
    winners: np.ndarray,
    losers: np.ndarray,
    clusters: np.ndarray,
    n_items: int,
    reference: int,
    rng: np.random.Generator,
    *,
    counts: np.ndarray | None = None,
    n_splits: int = 100,
) -> float:
    """Mean Spearman-Brown corrected correlation between abilities fitted on random halves
    of the participants (splits where a half has an infinite ability are skipped)."""
    winners, losers = np.asarray(winners, np.int64), np.asarray(losers, np.int64)
    tables = cluster_tables(winners, losers, n_items, clusters, counts=counts)
    halves = rng.permuted(np.tile(np.arange(tables.n_clusters) % 2, (n_splits, 1)), axis=1)
    multiplicity = np.concatenate([halves, 1 - halves]).astype(float)
    full = fit(winners, losers, n_items, reference=reference, counts=counts)
    estimates = _refit(tables, multiplicity, n_items, reference, np.ones(n_items, bool), full)
    first_half, second_half = estimates[:n_splits], estimates[n_splits:]
    correlations = np.array([np.corrcoef(x, y)[0, 1] for x, y in zip(first_half, second_half, strict=True)])
    r = np.nanmean(correlations)
    return float(2 * r / (1 + r))


def first_position_rate(first: np.ndarray, winners: np.ndarray, counts: np.ndarray | None = None) -> float:
    """Share of comparisons with a known first item (first >= 0) won by the item shown first."""
    first, winners = np.asarray(first), np.asarray(winners)
    counts = np.ones(len(winners)) if counts is None else np.asarray(counts, float)
    known = first >= 0
    return float(counts[known & (first == winners)].sum() / counts[known].sum())


def simulate(
    abilities: np.ndarray,
    first_items: np.ndarray,
    second_items: np.ndarray,
    rng: np.random.Generator,
    *,
    order_effect: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """One outcome per (first, second) pair: P(first wins) = expit(l_f - l_s + delta)."""
    abilities = np.asarray(abilities, float)
    first_items, second_items = np.asarray(first_items), np.asarray(second_items)
    eta = abilities[first_items] - abilities[second_items] + order_effect
    first_wins = rng.random(len(first_items)) < 1.0 / (1.0 + np.exp(-eta))
    winners = np.where(first_wins, first_items, second_items)
    losers = np.where(first_wins, second_items, first_items)
    return winners, losers
