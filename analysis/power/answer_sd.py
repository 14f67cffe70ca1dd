"""The answer-level SD tau estimated from a fitted study's per-vignette estimates, to plan the next one.

Each vignette's own fit gives every system's estimate against the reference, b_kv with SE s_kv. The estimates
of one system vary across vignettes by their noise plus the true variation of (u_kv - u_refv), whose variance is
2 tau^2 when answers vary independently. DerSimonian-Laird per system gives that between-vignette variance
(the same estimator as the heterogeneity tests, analysis/bradley_terry/heterogeneity.py); half of it, averaged
over the systems and questions with at least 3 usable vignettes, is tau^2. It is an estimate from few vignettes:
the planning page says where it came from, and a researcher can overwrite it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

MIN_VIGNETTES = 3


def between_vignette_variance(estimates: Sequence[float | None], se: Sequence[float | None]) -> float | None:
    """DerSimonian-Laird tau^2 of one system's per-vignette estimates (None with fewer than 3 usable)."""
    pairs = [
        (float(b), float(s))
        for b, s in zip(estimates, se, strict=True)
        if b is not None and s is not None and math.isfinite(b) and math.isfinite(s) and s > 0
    ]
    if len(pairs) < MIN_VIGNETTES:
        return None
    b, s = np.array(pairs).T
    w = 1.0 / s**2
    pooled = float(np.sum(w * b) / np.sum(w))
    q = float(np.sum(w * (b - pooled) ** 2))
    scale = float(np.sum(w) - np.sum(w**2) / np.sum(w))
    return max(0.0, (q - (len(b) - 1)) / scale) if scale > 0 else None


def answer_sd(per_vignette: Sequence[tuple[Sequence, Sequence]]) -> tuple[float, int] | None:
    """tau from (estimates, SEs) per system and question, each a sequence over vignettes: (tau, how many of
    them were usable), or None when none was."""
    variances = [v for estimates, se in per_vignette if (v := between_vignette_variance(estimates, se)) is not None]
    if not variances:
        return None
    return math.sqrt(float(np.mean(variances)) / 2), len(variances)
