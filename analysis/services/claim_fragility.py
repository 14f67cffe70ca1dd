"""How fragile each significant result of a question is, as a refit stores it: the fewest judgments, judges and
vignettes whose removal, confirmed by refitting, makes it not significant or flips its sign.

The maths is analysis/bradley_terry/fragility.py (influence approximation, then refits); the test is the headline
test (analysis/bradley_terry/headline_test.py: CR2 over vignettes, judge design effect, Satterthwaite df) of
the question's estimates, redone on what is left after each removal.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
from scipy import stats

from .. import bradley_terry as bt
from ..bradley_terry.fragility import Fragility, drop_effects, fragility
from ..bradley_terry.headline_test import HeadlineTest, headline_test
from ..results import ClaimFragility, UnitFragility
from .judged import Judged, guarded

ALPHA = 0.05
UNITS = ("judgment", "judge", "vignette")


def fragility_of_claims(judged: Judged) -> list[ClaimFragility]:
    """Per system significant at ALPHA by the headline test, how many judgments, judges and vignettes it hinges on;
    [] when nothing is significant (or the question has no test)."""
    return [
        ClaimFragility(
            system=name,
            estimate=estimate,
            p=p,
            units=[
                UnitFragility(
                    unit=one.unit,
                    count=one.count,
                    of=one.of,
                    judgments=one.judgments,
                    of_judgments=one.of_judgments,
                    approximate=one.approximate,
                    refits=one.refits,
                    words=one.in_words(),
                )
                for one in found
            ],
        )
        for name, estimate, p, found in fragile_claims(judged)
    ]


def fragile_claims(judged: Judged) -> list[tuple[str, float, float, list[Fragility]]]:
    """(system, estimate, p, its Fragility per unit in UNITS, with the units removed) per significant system."""
    first = judged.first_in_estimates()
    plain = bt.fit(judged.winners, judged.losers, judged.n_items, reference=judged.reference, first=first,
                   item_names=judged.names)  # fmt: skip
    shown = headline_on(judged, np.ones(len(judged.winners), bool), fitted=plain)
    if shown is None or plain.covariance is None:
        return []
    scores = bt.score_contributions(plain, judged.winners, judged.losers, first=first)
    ones = np.ones(len(judged.winners))
    units = {"judgment": None, "judge": judged.clusters, "vignette": judged.vignettes}
    claims = []
    for k, name in enumerate(judged.names):
        estimate, se, p, df = (float(getattr(shown, key)[k]) for key in ("estimates", "se", "p", "df"))
        if k == judged.reference or not (p < ALPHA and se > 0 and math.isfinite(df)):
            continue
        effects = drop_effects(scores, plain.covariance, k)
        holds = partial(still_significant, judged, k=k, sign=math.copysign(1.0, estimate))
        found = [
            fragility(unit=unit, effects=effects, units=units[unit], judgments=ones, estimate=estimate, se=se,
                      critical=float(stats.t.ppf(1 - ALPHA / 2, df)), holds=holds)
            for unit in UNITS
        ]  # fmt: skip
        claims.append((name, estimate, p, found))
    return claims


def still_significant(judged: Judged, keep: np.ndarray, *, k: int, sign: float) -> bool:
    """Whether system k is still significant with the same sign by the headline test on the rows `keep` holds."""
    again = headline_on(judged, keep)
    if again is None:
        return False
    value, p_again = float(again.estimates[k]), float(again.p[k])
    return bool(p_again < ALPHA and math.isfinite(value) and math.copysign(1.0, value) == sign)


def headline_on(judged: Judged, keep: np.ndarray, fitted=None) -> HeadlineTest | None:
    """The headline test on the rows `keep` holds; None when nothing can be fitted or tested there."""
    first = judged.first_in_estimates()
    first = None if first is None else first[keep]
    test = guarded(
        headline_test, judged.winners[keep], judged.losers[keep], judged.n_items, reference=judged.reference,
        judges=judged.clusters[keep], vignettes=judged.vignettes[keep], first=first, item_names=judged.names,
        fitted=fitted,
    )  # fmt: skip
    return None if test is None or test.why_not else test


FRAGILITY_COLUMNS = ["fragility_judgments", "fragility_judges", "fragility_vignettes", "fragility"]


def fragility_columns(claims: list[ClaimFragility], system: str) -> dict:
    """results.csv's fragility columns of one system: the counts per unit and the words ("" when not significant)."""
    claim = next((c for c in claims if c.system == system), None)
    if claim is None:
        return {}
    by_unit = {one.unit: one for one in claim.units}
    return {f"fragility_{unit}s": by_unit[unit].count for unit in UNITS if unit in by_unit} | {
        "fragility": "; ".join(one.words for one in claim.units)
    }
