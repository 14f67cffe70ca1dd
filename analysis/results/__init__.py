"""Stored analysis results, typed and versioned: shapes (the dataclasses) and versions (reading old runs).

No Django here: AnalysisRun.read_results() hands its JSON fields to `read`, fitting builds the shapes.
"""

from .shapes import (
    ALTERNATIVE_FITS,
    ALTERNATIVE_READINGS,
    INTERVAL_KINDS,
    AlternativeFit,
    EffectEstimate,
    Fit,
    Halo,
    Headline,
    Interval,
    IntervalKind,
    ItemEstimate,
    QuestionResult,
    Ranks,
    RunResults,
    ShapeError,
    SystemAtFit,
    SystemRank,
    VignetteFit,
    build,
    stored,
)
from .versions import CURRENT_VERSION, UPGRADES, read, run_fields

__all__ = [
    "ALTERNATIVE_FITS",
    "ALTERNATIVE_READINGS",
    "CURRENT_VERSION",
    "INTERVAL_KINDS",
    "UPGRADES",
    "AlternativeFit",
    "EffectEstimate",
    "Fit",
    "Halo",
    "Headline",
    "Interval",
    "IntervalKind",
    "ItemEstimate",
    "QuestionResult",
    "Ranks",
    "RunResults",
    "ShapeError",
    "SystemAtFit",
    "SystemRank",
    "VignetteFit",
    "build",
    "read",
    "run_fields",
    "stored",
]
