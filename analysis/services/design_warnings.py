"""The readiness line's design warnings (registered with surveys' hook by analysis/apps.py).

Before a study goes live: with fewer than 3 vignettes the dashboard shows no test at all; otherwise the reported
test's power at the planned size (the study's systems, vignettes, judgments per cell and vignettes per judge,
its questions, the answer-level SD prefilled as on the power page, abilities evenly spread over a 0.4 log-odds
gap) is simulated with a few studies and cached by design, and below 50% the line says so with the fix.
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache

from surveys.models import Study

from ..power.levers import MIN_VIGNETTES
from ..power.reported_test import Design, reported_test_power
from .power_runs import answer_sd_prefill

WARN_BELOW = 0.5
SIMULATIONS = 100  # enough to tell 50% from 80% (Monte Carlo SE under 0.05); cached per design
ASSUMED_GAP = 0.4  # the power page's default: the seed study's gap between the best and the worst system


def design_check(study: Study) -> list[str]:
    vignettes, systems = study.vignettes.count(), study.systems.count()
    if vignettes < MIN_VIGNETTES:
        return [
            f"too few vignettes to test anything: with {vignettes} the dashboard shows estimates but no test (it "
            f"needs at least {MIN_VIGNETTES}, to generalise over vignettes); add vignettes"
        ]
    if systems < 2:
        return []
    tau = answer_sd_prefill(study).value
    design = Design.of(
        systems=systems,
        gap=ASSUMED_GAP,
        vignettes=vignettes,
        repetitions=study.repetitions,
        pairs_per_judge=study.vignettes_per_participant,
        answer_sd=tau,
        questions=max(study.questions.count(), 1),
    )
    # Hashed: the design's repr is longer than memcached's 250 characters and has spaces.
    key = "design-power:" + hashlib.sha256(repr(sorted(design.as_dict().items())).encode()).hexdigest()
    power = cache.get(key)
    if power is None:
        power = reported_test_power(design, simulations=SIMULATIONS, seed=1).power
        cache.set(key, power, 24 * 3600)
    if power >= WARN_BELOW:
        return []
    return [
        f"the reported test has about {power:.0%} power at the planned size ({design.judges} judges, {vignettes} "
        f"vignettes, answer-level SD {tau:g}, a {ASSUMED_GAP} log-odds gap between the best and worst system): "
        "add vignettes (the power page shows what more vignettes and more judges would give)"
    ]
