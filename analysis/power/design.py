"""What every power calculation shares: the assumed abilities and the design checks."""

from __future__ import annotations

import math

import numpy as np

SPACINGS = ("even", "one-best")


def abilities_for(systems: int, gap: float, spacing: str) -> np.ndarray:
    """True log-abilities, worst first and best last."""
    if spacing == "even":
        return np.linspace(0.0, gap, systems)
    if spacing == "one-best":
        return np.r_[np.zeros(systems - 1), gap]
    raise ValueError(f"spacing must be one of {', '.join(SPACINGS)}, not {spacing!r}.")


def check_design(systems, vignettes, repetitions, simulations, questions) -> None:
    if systems < 2:
        raise ValueError("at least two systems are needed.")
    if min(vignettes, repetitions, simulations, questions) < 1:
        raise ValueError("vignettes, repetitions, simulations and questions must be at least 1.")


def participants_needed(judgments: int, vignettes_per_participant: int) -> int:
    return math.ceil(judgments / vignettes_per_participant)


def fixed_seed(seed: int | None) -> int:
    """A seed to reuse across the candidates of a search (a fresh one when none is given)."""
    if seed is not None:
        return seed
    entropy = np.random.SeedSequence().entropy  # drawn fresh: an int when none is given
    assert isinstance(entropy, int)
    return int(entropy % 2**63)


def smallest_repetitions(reaches, max_repetitions: int) -> int | None:
    """Smallest repetitions per cell for which `reaches(repetitions)` holds (None if even
    `max_repetitions` does not). Bisection: power rises with repetitions, and every candidate
    uses the same seed so that simulation noise does not break that order."""
    if not reaches(max_repetitions):
        return None
    return bisect(reaches, 0, max_repetitions)  # 0 never counts


def bisect(reaches, below: int, above: int) -> int:
    """Smallest value in (below, above] for which `reaches` holds, given that it holds at `above` and not at
    `below`, and that it holds at every value past one where it does (power rises along the search)."""
    while above - below > 1:
        middle = (below + above) // 2
        if reaches(middle):
            above = middle
        else:
            below = middle
    return above
