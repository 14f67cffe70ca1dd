"""Simulated power of a pairwise-judging design, for the tests the analysis reports.

`reported_power` (`power --test reported`, the default): each system against the reference, per
question, Holm within a question, optionally Bonferroni across questions, with answer-level
SD as an input. `power_analysis` (`power --test best-vs-worst`): the source study's figure,
best against worst at alpha / questions (85.6% for its design at 5 questions).
`judge_assisted_power` (`power --judge-agreement A`): the reported tests when the humans are
combined with an LLM judge by PPI++, and the human judgments that saves.
"""

from .best_vs_worst import PowerResult, power_analysis, repetitions_needed
from .design import SPACINGS, abilities_for
from .judge import JudgePowerResult, judge_assisted_power, judge_correlation
from .reported import INTERVALS, ReportedPowerResult, reported_power

TESTS = ("reported", "best-vs-worst")

__all__ = [
    "INTERVALS",
    "SPACINGS",
    "TESTS",
    "JudgePowerResult",
    "PowerResult",
    "ReportedPowerResult",
    "abilities_for",
    "judge_assisted_power",
    "judge_correlation",
    "power_analysis",
    "repetitions_needed",
    "reported_power",
]
