"""One question's fits and diagnostics as a typed QuestionResult; the maths is in analysis.bradley_terry.

Extra interval kinds are entries in INTERVALS (with their description in analysis.results.INTERVAL_KINDS):
each takes the question's arrays and its main fit and returns per-system bounds, or None when it cannot.
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .. import bradley_terry as bt
from ..results import (
    ALTERNATIVE_FITS,
    INTERVAL_KINDS,
    AlternativeFit,
    EffectEstimate,
    Fit,
    Halo,
    Interval,
    ItemEstimate,
    QuestionResult,
    VignetteFit,
)
from .reading import QuestionData

DEFAULT_PARAMETERS = {
    "order_effect": False,  # the method's estimates are plain BT; the order effect is reported beside them
    "bootstrap": 1000,
    "seed": 20240601,
    "split_halves": 100,
    "style_per_words": 100,  # the style covariate: word-count difference (winner - loser) per 100 words
    "bias_reduced": False,  # the study's analysis setting: Firth's fit for the reported estimates
}


def json_safe(value):
    """numpy scalars and arrays to Python, nan and infinities to None (PostgreSQL's JSON has no NaN)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return [json_safe(v) for v in value.tolist()]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


def stars(p: float | None) -> str:
    if p is None or p != p:
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


@dataclass(frozen=True)
class Judged:
    """One question's valid judgments as arrays over the systems (item order), and how to fit them."""

    winners: np.ndarray
    losers: np.ndarray
    first: np.ndarray  # the item shown first
    clusters: np.ndarray  # the judge (participant) of each judgment
    vignettes: np.ndarray
    style: np.ndarray  # word-count difference, winner minus loser
    names: list[str]
    reference: int
    parameters: dict
    # Judge-bootstrap replicate estimates (see `resample_judges`), or None when judges cannot be resampled.
    judge_replicates: np.ndarray | None = None

    @property
    def n_items(self) -> int:
        return len(self.names)

    def first_in_estimates(self) -> np.ndarray | None:
        return self.first if self.parameters["order_effect"] else None


@dataclass(frozen=True)
class JudgeReplicates:
    """A question's judge-bootstrap replicates from `resample_judges` (None: judges cannot be resampled)."""

    estimates: np.ndarray | None


def resample_judges(
    questions: list[QuestionData], *, n_items: int, reference: int, parameters: dict
) -> list[JudgeReplicates]:
    """Every question's judge (participant) bootstrap replicates, drawn with one set of judge weights.

    Judges answer every question, so replicate r takes the same judges, as often, for every question
    (a joint bootstrap: each question's intervals are those of a participant bootstrap, and the
    questions' intervals are coherent). The weights are drawn once per refit on a stream of their own
    (seed, 1), over the study's judges numbered in the order of their ids; the participant bootstrap's
    percentiles and the two-way bootstrap's judge part both use these replicates."""
    drawn = [JudgeReplicates(None) for _ in questions]
    n_boot = parameters["bootstrap"]
    if n_boot < 1 or not questions:
        return drawn
    judge_ids = np.unique(np.concatenate([np.unique(np.asarray(q.clusters)) for q in questions]))
    positions, bases = [], []

    def tables():  # one question's table at a time: only its rows are kept once resampling starts
        for position, question in enumerate(questions):
            if len(np.unique(np.asarray(question.clusters))) < 2:
                continue
            prepared = _guarded(
                _judge_table,
                question,
                judge_ids=judge_ids,
                n_items=n_items,
                reference=reference,
                order_effect=parameters["order_effect"],
            )
            if prepared is None:
                continue
            positions.append(position)
            bases.append(prepared[0])
            table, prepared = prepared[1], None
            yield table
            table = None  # freed before the next question's table is built

    estimates = _guarded(
        bt.shared_resample, tables(), bases, rng=np.random.default_rng([parameters["seed"], 1]), n_boot=n_boot
    )
    if estimates is None:
        return drawn
    for position, replicates in zip(positions, estimates, strict=True):
        drawn[position] = JudgeReplicates(replicates)
    return drawn


def _judge_table(
    question: QuestionData, *, judge_ids: np.ndarray, n_items: int, reference: int, order_effect: bool
) -> tuple[bt.RefitBasis, bt.DenseTable]:
    """A question's full fit and its per-judge counts over the study's judges (`judge_ids`)."""
    winners, losers, first = (
        np.asarray(column, np.int64) for column in (question.winners, question.losers, question.first)
    )
    return bt.prepare_dense_table(
        winners,
        losers,
        n_items,
        reference=reference,
        clusters=np.searchsorted(judge_ids, np.asarray(question.clusters)),
        n_clusters=len(judge_ids),
        first=first if order_effect else None,
    )


def fit_question(
    data: QuestionData,
    *,
    systems: list[dict],
    reference: int,
    parameters: dict,
    position: int,
    vignette_keys: dict,
    judge_replicates: JudgeReplicates | None = None,
) -> QuestionResult:
    """Every estimate and diagnostic of one question; `judge_replicates` from `resample_judges` over
    all the study's questions (a refit), or else drawn for this question alone."""
    if judge_replicates is None:
        (judge_replicates,) = resample_judges([data], n_items=len(systems), reference=reference, parameters=parameters)
    winners, losers, first, clusters, vignettes, style = data.arrays()
    judged = Judged(
        winners,
        losers,
        first,
        clusters,
        vignettes,
        style,
        [s["key"] for s in systems],
        reference,
        parameters,
        judge_replicates.estimates,
    )
    if len(winners) == 0:
        return QuestionResult(
            question=data.key,
            text=data.text,
            position=position,
            n_judgments=0,
            fit=None,
            problems=["No valid judgments on this question yet."],
        )
    rng = np.random.default_rng(parameters["seed"])
    plain = _fit(judged, first=judged.first_in_estimates())
    main, alternatives, problems = _reported_fit(judged, plain=plain)
    intervals = {}
    for kind, compute in INTERVALS.items():
        # The other intervals resample or sandwich the maximum-likelihood fit (as R's vcovCL and boot do).
        interval = compute(judged=judged, main=plain, rng=rng)
        if interval is not None:
            intervals[kind] = interval
    ordered = _fit(judged, first=first)
    return QuestionResult(
        question=data.key,
        text=data.text,
        position=position,
        n_judgments=len(winners),
        fit=fit_of(main),
        problems=[*problems, *main.problems],
        n_participants=len(np.unique(clusters)),
        holm_p=json_safe(bt.holm(main.p)),
        stars=[stars(p) for p in main.p],
        intervals=intervals,
        order_effect=effect_of(ordered.order_effect),
        alternative_fits={"style_controlled": _style_controlled(judged), **alternatives},
        first_position_rate=json_safe(bt.first_position_rate(first, winners)),
        separation_reliability=json_safe(_guarded(bt.separation_reliability, main)) if main.converged else None,
        split_half_reliability=json_safe(_split_half(judged, rng=rng)),
        by_vignette=_by_vignette(judged, vignette_keys=vignette_keys),
    )


def _reported_fit(judged: Judged, *, plain: bt.BTResult) -> tuple[bt.BTResult, dict[str, AlternativeFit], list[str]]:
    """The fit whose estimates are reported, the other of plain and Firth beside it, and what to say.

    The study's bias-reduced setting reports Firth's fit (finite where a system never wins) and keeps
    the maximum-likelihood fit beside it, so the dashboard can say which estimates the setting changed.
    """
    if not judged.parameters["bias_reduced"]:
        return plain, {"bias_reduced": _bias_reduced(judged)}, []
    firth = _firth(judged)
    if firth is None:
        problem = "The bias-reduced fit could not be computed: these are the maximum-likelihood estimates."
        return plain, {}, [problem]
    beside = AlternativeFit(label=ALTERNATIVE_FITS["maximum_likelihood"], fit=fit_of(plain))
    return firth, {"maximum_likelihood": beside}, []


def _fit(judged: Judged, *, first: np.ndarray | None = None, covariates: np.ndarray | None = None) -> bt.BTResult:
    return bt.fit(
        judged.winners,
        judged.losers,
        judged.n_items,
        reference=judged.reference,
        first=first,
        covariates=covariates,
        item_names=judged.names,
    )


def fit_of(result: bt.BTResult) -> Fit:
    """What a run stores of one fit: JSON-ready numbers (nan and infinities are None)."""
    numbers = (result.estimates, result.se, result.z, result.p, result.ci_low, result.ci_high)
    return Fit(
        reference=result.reference,
        n_comparisons=int(result.n_comparisons),
        log_likelihood=json_safe(result.log_likelihood),
        deviance=json_safe(result.deviance),
        null_deviance=json_safe(result.null_deviance),
        converged=bool(result.converged),
        iterations=int(result.iterations),
        items=[
            ItemEstimate(
                result.item_names[k],
                *(json_safe(float(values[k])) for values in numbers),
                wins=round(float(result.wins[k])),
                losses=round(float(result.losses[k])),
            )
            for k in range(len(result.item_names))
        ],
        order_effect=effect_of(result.order_effect),
        covariate_effects=(
            None if result.covariate_effects is None else [effect_of(e) for e in result.covariate_effects]
        ),
        problems=list(result.problems),
    )


def effect_of(effect: bt.Effect | None) -> EffectEstimate | None:
    if effect is None:
        return None
    numbers = (effect.estimate, effect.se, effect.z, effect.p, effect.ci_low, effect.ci_high)
    return EffectEstimate(effect.name, *(json_safe(float(value)) for value in numbers))


def _style_controlled(judged: Judged) -> AlternativeFit:
    """The fit with the answers' length difference as a covariate (Chatbot Arena's style control).

    When every judged pair had answers of equal length there is nothing to control for; when each
    system's answers are equally long on every vignette the covariate is confounded with the
    systems and the fit says it is not identifiable.
    """
    label = ALTERNATIVE_FITS["style_controlled"]
    if not np.any(judged.style):
        return AlternativeFit(label=label, fit=None, problems=["No length differences to control for."])
    covariates = (judged.style / judged.parameters["style_per_words"])[:, None]
    return AlternativeFit(
        label=label, fit=fit_of(_fit(judged, first=judged.first_in_estimates(), covariates=covariates))
    )


def _bias_reduced(judged: Judged) -> AlternativeFit:
    """Firth's bias-reduced fit (BTm(..., br = TRUE)): finite for a system that never wins."""
    label = ALTERNATIVE_FITS["bias_reduced"]
    result = _firth(judged)
    if result is None:
        return AlternativeFit(label=label, fit=None, problems=["The bias-reduced fit could not be computed."])
    return AlternativeFit(label=label, fit=fit_of(result))


def _firth(judged: Judged) -> bt.BTResult | None:
    return _guarded(
        bt.fit,
        judged.winners,
        judged.losers,
        judged.n_items,
        reference=judged.reference,
        first=judged.first_in_estimates(),
        item_names=judged.names,
        bias_reduced=True,
    )


def _guarded(function, *args, **kwargs):
    """A diagnostic that cannot be computed on this data is None, never a failed run."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return function(*args, **kwargs)
    except (ValueError, ZeroDivisionError, IndexError, np.linalg.LinAlgError, FloatingPointError):
        return None


def _participant_bootstrap(*, judged: Judged, main: bt.BTResult, rng: np.random.Generator) -> Interval | None:
    """Percentile intervals from resampling judges (participants) with all their judgments
    (the replicates `resample_judges` drew for every question at once)."""
    n_boot = judged.parameters["bootstrap"]
    if judged.judge_replicates is None:
        return None
    result = _guarded(bt.percentile_intervals, judged.judge_replicates[:, : judged.n_items])
    if result is None:  # every replicate failed
        return None
    return _interval("bootstrap", result, details={"n_boot": n_boot, "n_failed": int(result.n_failed)})


def _two_way_robust(*, judged: Judged, main: bt.BTResult, rng: np.random.Generator) -> Interval | None:
    """The judge x answer (vignette) cluster-robust sandwich, t with (fewer clusters - 1) df."""
    if not _two_way_possible(judged):
        return None
    result = _guarded(
        bt.cluster_robust,
        judged.winners,
        judged.losers,
        judged.n_items,
        reference=judged.reference,
        judges=judged.clusters,
        vignettes=judged.vignettes,
        first=judged.first_in_estimates(),
        item_names=judged.names,
        fitted=main,
    )
    if result is None:
        return None
    return _interval(
        "two_way_robust", result, details={"df": result.df, **{f"n_{k}": v for k, v in result.clusters.items()}}
    )


def _two_way_bootstrap(*, judged: Judged, main: bt.BTResult, rng: np.random.Generator) -> Interval | None:
    """Judge x vignette bootstrap (inclusion-exclusion, as R's vcovBS), on a generator of its own."""
    n_boot = judged.parameters["bootstrap"]
    if n_boot < 1 or not _two_way_possible(judged):
        return None
    result = _guarded(
        bt.two_way_bootstrap,
        judged.winners,
        judged.losers,
        judged.n_items,
        reference=judged.reference,
        judges=judged.clusters,
        vignettes=judged.vignettes,
        # Its own stream for the vignettes and cells; the judges' part is the participant bootstrap's.
        rng=np.random.default_rng([judged.parameters["seed"], 2]),
        first=judged.first_in_estimates(),
        n_boot=n_boot,
        judge_estimates=judged.judge_replicates,
    )
    if result is None:
        return None
    failed = {f"n_failed_{k}": v for k, v in result.n_failed.items()}
    return _interval("two_way_bootstrap", result, details={"n_boot": n_boot, "df": result.df, **failed})


def _two_way_possible(judged: Judged) -> bool:
    return len(np.unique(judged.clusters)) >= 2 and len(np.unique(judged.vignettes)) >= 2


def _interval(kind: str, result, *, details: dict) -> Interval:
    described = INTERVAL_KINDS[kind]
    return Interval(
        label=described.label,
        answers=described.answers,
        level=float(result.level),
        ci_low=json_safe(result.ci_low),
        ci_high=json_safe(result.ci_high),
        se=json_safe(result.se),
        details=json_safe(details),
    )


# Interval kind -> its computation; the kind's label and question are in analysis.results.INTERVAL_KINDS.
INTERVALS: dict[str, Callable[..., Interval | None]] = {
    "bootstrap": _participant_bootstrap,
    "two_way_robust": _two_way_robust,
    "two_way_bootstrap": _two_way_bootstrap,
}


def _split_half(judged: Judged, *, rng: np.random.Generator) -> float | None:
    if len(np.unique(judged.clusters)) < 4 or judged.parameters["split_halves"] < 1:
        return None
    return _guarded(
        bt.split_half_reliability,
        judged.winners,
        judged.losers,
        judged.clusters,
        judged.n_items,
        judged.reference,
        rng,
        n_splits=judged.parameters["split_halves"],
    )


def _by_vignette(judged: Judged, *, vignette_keys: dict[int, str]) -> list[VignetteFit]:
    """Per vignette: estimates, SEs, wins and losses, and what broke the fit there."""
    breakdown = []
    for vignette in np.unique(judged.vignettes):
        rows = judged.vignettes == vignette
        result = bt.fit(
            judged.winners[rows],
            judged.losers[rows],
            judged.n_items,
            reference=judged.reference,
            item_names=judged.names,
        )
        breakdown.append(
            VignetteFit(
                vignette_id=int(vignette),
                vignette=vignette_keys.get(int(vignette), str(int(vignette))),
                n_judgments=int(rows.sum()),
                estimates=json_safe(result.estimates),
                se=json_safe(result.se),
                wins=[round(float(w)) for w in result.wins],
                losses=[round(float(w)) for w in result.losses],
                problems=list(result.problems),
            )
        )
    return breakdown


def halo_correlations(questions: list[QuestionResult]) -> Halo:
    """Pearson correlation of the system estimates between every two questions (finite systems only)."""
    fitted = [question for question in questions if question.fit]
    estimates = [np.array([i.estimate for i in q.fit.items], dtype=float) for q in fitted]
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
