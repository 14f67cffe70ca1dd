"""One question's fits and diagnostics as a typed QuestionResult; the maths is in analysis.bradley_terry.

The stages: the question's arrays and main fit (judged.py), the participant bootstrap's draws shared by
every question (participant_draws.py), the other intervals (intervals.py), the fits beside the main one
(alternatives.py), and what a run stores of each (records.py).
"""

from __future__ import annotations

import statistics

import numpy as np

from .. import bradley_terry as bt
from ..bradley_terry.labels import count_distinct, distinct
from ..results import Halo, Interval, QuestionResult, VignetteFit
from ..results.headline import degenerate
from .alternatives import reported_fit, style_controlled
from .claim_fragility import fragility_of_claims
from .headline import headline_of, headline_test_of, tested_p
from .intervals import INTERVALS
from .judged import Judged, fit_judged, guarded
from .participant_draws import ParticipantReplicates, SplitDraws, resample_participants
from .rank_claims import ranks_of
from .reading import QuestionData
from .records import effect_of, fit_of, json_safe, stars
from .set_results import fit_by_set

DEFAULT_PARAMETERS = {
    "order_effect": False,  # the method's estimates are plain BT; the order effect is reported beside them
    "bootstrap": 1000,
    "seed": 20240601,
    "split_halves": 100,
    "style_per_words": 100,  # the style covariate: word-count difference (winner - loser) per 100 words
    "bias_reduced": False,  # the study's analysis setting: Firth's fit for the reported estimates
    "fragility": True,  # how many judgments, judges and vignettes each significant result hinges on (refits)
}


def fit_question(
    data: QuestionData,
    *,
    systems: list[dict],
    reference: int,
    parameters: dict,
    position: int,
    vignette_keys: dict,
    participant_replicates: ParticipantReplicates | None = None,
    split_draws: SplitDraws | None = None,
    vignette_sets: dict[int, str] | None = None,
) -> QuestionResult:
    """Every estimate and diagnostic of one question; `participant_replicates` from `resample_participants`
    over all the study's questions (a refit), or else drawn for this question alone; `split_draws` keeps
    the split halves drawn for one question for the next; `vignette_sets` (vignette id -> set) adds the results
    per set and the differences between sets."""
    if participant_replicates is None:
        (participant_replicates,) = resample_participants(
            [data], n_items=len(systems), reference=reference, parameters=parameters
        )
    judged = _judged(data, systems=systems, reference=reference, parameters=parameters, drawn=participant_replicates)
    if len(judged.winners) == 0:
        return QuestionResult(
            question=data.key,
            text=data.text,
            position=position,
            n_judgments=0,
            fit=None,
            problems=["No valid judgments on this question yet."],
        )
    rng = np.random.default_rng(parameters["seed"])
    plain = fit_judged(judged, first=judged.first_in_estimates())
    main, alternatives, problems = reported_fit(judged, plain=plain)
    intervals = _intervals(judged, plain=plain, rng=rng)
    test = headline_test_of(judged, plain=plain)  # computed once: the headline and the rank claims read it
    headline = headline_of(judged, plain=plain, intervals=intervals, test=test)
    # p, Holm p (across the tested systems) and stars are the headline test's: none where it has no test. The
    # Wald ones (conditional on these answers) stay in `fit`.
    tested = tested_p(headline)
    ordered = fit_judged(judged, first=judged.first)
    return QuestionResult(
        question=data.key,
        text=data.text,
        position=position,
        n_judgments=len(judged.winners),
        fit=fit_of(main),
        problems=[*problems, *main.problems],
        n_participants=count_distinct(judged.clusters),
        holm_p=json_safe(bt.holm(tested)),
        stars=[stars(p) for p in tested],
        intervals=intervals,
        order_effect=effect_of(ordered.order_effect),
        alternative_fits={"style_controlled": style_controlled(judged), **alternatives},
        first_position_rate=json_safe(bt.first_position_rate(judged.first, judged.winners)),
        separation_reliability=json_safe(guarded(bt.separation_reliability, main)) if main.converged else None,
        split_half_reliability=json_safe(_split_half(judged, rng=rng, draws=split_draws or SplitDraws())),
        by_vignette=_by_vignette(judged, vignette_keys=vignette_keys),
        headline=headline,
        ranks=ranks_of(judged, test=test),
        by_set=fit_by_set(judged, vignette_sets=vignette_sets) if vignette_sets else None,
        fragility=fragility_of_claims(judged) if parameters.get("fragility", True) else [],
    )


def _judged(
    data: QuestionData, *, systems: list[dict], reference: int, parameters: dict, drawn: ParticipantReplicates
) -> Judged:
    winners, losers, first, clusters, vignettes, style = data.arrays()
    names = [system["key"] for system in systems]
    return Judged(winners, losers, first, clusters, vignettes, style, names, reference, parameters, drawn.estimates)


def _intervals(judged: Judged, *, plain: bt.BTResult, rng: np.random.Generator) -> dict[str, Interval]:
    """Every interval kind that can be computed on this question (INTERVALS), by kind."""
    intervals = {}
    for kind, compute in INTERVALS.items():
        # The other intervals resample or sandwich the maximum-likelihood fit (as R's vcovCL and boot do).
        interval = compute(judged=judged, main=plain, rng=rng)
        if interval is not None:
            intervals[kind] = interval
    return intervals


def _split_half(judged: Judged, *, rng: np.random.Generator, draws: SplitDraws) -> float | None:
    n_clusters, n_splits = count_distinct(judged.clusters), judged.parameters["split_halves"]
    if n_clusters < 4 or n_splits < 1:
        return None
    result = guarded(
        bt.split_half,
        judged.winners,
        judged.losers,
        judged.clusters,
        judged.n_items,
        judged.reference,
        rng,
        n_splits=n_splits,
        halves=draws.halves(rng, n_clusters=n_clusters, n_splits=n_splits),
    )
    return None if result is None else result.value


def _by_vignette(judged: Judged, *, vignette_keys: dict[int, str]) -> list[VignetteFit]:
    """Per vignette: estimates, SEs, wins and losses, and what broke the fit there."""
    breakdown = []
    for vignette in distinct(judged.vignettes):
        rows = judged.vignettes == vignette
        result = bt.fit(
            judged.winners[rows],
            judged.losers[rows],
            judged.n_items,
            reference=judged.reference,
            item_names=judged.names,
        )
        estimates, se, problems = _worth_printing(result, judged)
        breakdown.append(
            VignetteFit(
                vignette_id=int(vignette),
                vignette=vignette_keys.get(int(vignette), str(int(vignette))),
                n_judgments=int(rows.sum()),
                estimates=estimates,
                se=se,
                wins=[round(float(w)) for w in result.wins],
                losses=[round(float(w)) for w in result.losses],
                problems=[*result.problems, *problems],
            )
        )
    return breakdown


def _worth_printing(result: bt.BTResult, judged: Judged) -> tuple[list, list, list[str]]:
    """A vignette's estimates and SEs, None where the SE is too large to say anything, with the reason."""
    estimates, se, problems = json_safe(result.estimates), json_safe(result.se), []
    for k, name in enumerate(judged.names):
        reason = "" if estimates[k] is None else degenerate(estimates[k], se[k], reference=k == judged.reference)
        if reason:
            estimates[k] = se[k] = None
            problems.append(f"{name}: not estimable here: {reason}.")
    return estimates, se, problems


def halo_correlations(questions: list[QuestionResult]) -> Halo:
    """Pearson correlation of the system estimates between every two questions (finite systems only)."""
    fitted = [question for question in questions if question.fit]
    estimates = [np.array([i.estimate for i in fit.items], dtype=np.float64) for q in fitted if (fit := q.fit)]
    matrix = []
    for x in estimates:
        row = []
        for y in estimates:
            both = np.isfinite(x) & np.isfinite(y)
            enough = both.sum() >= 3 and np.std(x[both]) > 0 and np.std(y[both]) > 0
            row.append(json_safe(float(np.corrcoef(x[both], y[both])[0, 1])) if enough else None)
        matrix.append(row)
    off_diagonal = [v for i, row in enumerate(matrix) for j, v in enumerate(row) if i < j and v is not None]
    return Halo(
        questions=[question.question for question in fitted],
        matrix=matrix,
        mean_off_diagonal=statistics.fmean(off_diagonal) if off_diagonal else None,
    )
