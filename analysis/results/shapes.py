"""What a refit stores, as typed dataclasses: one RunResults per AnalysisRun (schema version 4).

Fitting builds these, `stored()` turns them into the JSON the AnalysisRun keeps, and `read()` (in
versions.py) builds them back, upgrading runs stored in an older shape first. Readers (exports, plots,
the dashboard, the API) use the fields, so a renamed field is an error in a test, not a blank column.

Extra intervals and extra fits are open-ended: `QuestionResult.intervals` maps an interval kind
("bootstrap", say a two-way cluster-robust one next) to an Interval that names itself and the question
it answers, and `alternative_fits` maps a name ("style_controlled", a bias-reduced fit) to a fit. A new
kind is then one entry where runs are fitted (analysis.services.fitting); readers list what a run has.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field


@dataclass(frozen=True)
class IntervalKind:
    label: str  # the dashboard's column heading
    answers: str  # which question the interval answers, in one sentence
    mark: str = ""  # what was resampled or clustered, in a few words: the plots' legend after the label


# Every kind of interval a run may store, by key. A new kind (issue 11's two-way cluster-robust or
# two-way bootstrap intervals) is one entry here and its computation in analysis.services.fitting.
INTERVAL_KINDS = {
    "bootstrap": IntervalKind(
        "Bootstrap CI",
        "Judges: would another sample of judges, rating these same answers, rank the systems the same way? "
        "(judges resampled with all their judgments; percentile interval)",
        "judges resampled",
    ),
    "cr2_vignette": IntervalKind(
        "Judge × vignette CR2 CI",
        "Judges and answers: would other judges, rating other answers of the same systems (other vignettes), "
        "rank them the same way? (CR2 over vignettes with the judge design effect; t with Satterthwaite df per "
        "system; docs/statistics.md)",
        "judges and vignettes, CR2",
    ),
    "two_way_robust": IntervalKind(
        "Judge × answer robust CI",
        "Judges and answers: would other judges, rating other answers of the same systems (other vignettes), "
        "rank them the same way? (cluster-robust over judge and vignette, inclusion–exclusion; t with fewer clusters − 1 "
        "df; none where the two-way variance estimate is not positive). Shown for comparison: with few or unequal "
        "vignettes it can come out near zero, which the headline's CR2 cannot.",
        "judges and vignettes, robust",
    ),
    "judge_robust": IntervalKind(
        "Judge-robust CI",
        "Judges, for these very answers: would other judges, rating these same answers, rank the systems the same "
        "way? (cluster-robust over judges; t with judges − 1 df). It does not generalise to other vignettes.",
        "judges, robust",
    ),
    "two_way_bootstrap": IntervalKind(
        "Judge × answer bootstrap CI",
        "Judges and answers, by resampling: the same question as the robust interval, answered by resampling "
        "judges and vignettes (as R's vcovBS).",
        "judges and vignettes resampled",
    ),
}
# Other fits of the same judgments, by key: their heading on the dashboard.
ALTERNATIVE_FITS = {
    "style_controlled": "Style-controlled",
    "bias_reduced": "Bias-reduced (Firth)",
    "maximum_likelihood": "Maximum likelihood",  # beside the estimates when the study reports Firth's fit
}
# How to read each other fit, in a sentence under the question's table.
ALTERNATIVE_READINGS = {
    "style_controlled": (
        "each system's ability after removing the advantage that longer answers get. A large change from the plain "
        "estimate means judges rewarded length. When one system's answers are always much longer or shorter than the "
        "others', length and system can hardly be told apart: the estimate is then an extrapolation to answers of "
        "equal length, and its interval is wide."
    ),
    "bias_reduced": (
        "the same model with Firth's bias reduction: close to the plain estimate when every system both wins and "
        "loses, and finite (where the plain estimate is not) for a system that never wins or never loses."
    ),
    "maximum_likelihood": (
        "the ordinary Bradley–Terry fit, beside the bias-reduced estimates the study reports; the other intervals "
        "are computed around it. It has no estimate (–) for a system that never wins or never loses."
    ),
}


# The headline interval: the one the tables lead with and p, Holm p and stars come from (docs/statistics.md).
HEADLINE_KIND = "cr2_vignette"  # generalises over judges and vignettes: the test, with p, Holm p and stars
NARROWER_KIND = "judge_robust"  # where no test is possible: generalises over judges, for these answers; no p
WALD_READING = "conditional on these answers (each judgment independent)"


@dataclass(frozen=True)
class Headline:
    """The interval a question's table leads with, per system in the systems' order, and why it is that one.

    `interval` is an INTERVAL_KINDS key, or "wald" (the API's name for it). `tested`: the interval is the
    headline test's (CR2 over vignettes), with p, Holm p and stars. Otherwise (too few vignettes, one judge)
    it is a narrower interval shown without any p, and `why` says in words why there is no test. `df` per
    system: the t reference of its interval (the Satterthwaite df of the headline test; None for the
    reference and where there is none); per system, `not_estimable` gives the reason its numbers are None."""

    interval: str
    label: str
    answers: str
    df: list[float | None]
    n_vignettes: int
    n_judges: int
    level: float
    se: list[float | None]
    p: list[float | None]
    ci_low: list[float | None]
    ci_high: list[float | None]
    not_estimable: list[str]
    why: str = ""
    tested: bool = True

    def df_in_words(self) -> str:
        """ "t with 6.9 df" or "t with Satterthwaite df 3.1–9.8 (per system)"; "" when no system has one."""
        values = sorted(value for value in self.df if value is not None)
        if not values:
            return ""
        if f"{values[0]:.3g}" == f"{values[-1]:.3g}":
            return f"t with {values[0]:.3g} df"
        return f"t with {values[0]:.3g}–{values[-1]:.3g} df (Satterthwaite, per system)"


@dataclass(frozen=True)
class SystemRank:
    """One system's rank claim: its rank set (1 = best) and its interval in the simultaneous band."""

    item: str
    rank: int | None  # the estimates' order (ties share the better rank); None without an estimate
    rank_low: int | None  # the rank set [rank_low, rank_high], jointly 95% for all systems; None: no claim
    rank_high: int | None
    band_low: float | None  # the simultaneous band (the reference: [0, 0]); None: no claim
    band_high: float | None
    claim: str  # "best with 95% confidence" only for the set {1}; else "rank 1–3", or why there is none


@dataclass(frozen=True)
class Ranks:
    """What a question supports about ranks (analysis/bradley_terry/ranks.py): the band and the rank sets.

    `best` is the key of the system best with 95% confidence ("" when no rank set is the single rank 1);
    `why_not` says why there is no band and no rank claim at all ("" when there are)."""

    level: float
    method: str
    band_critical: float | None
    band_df: float | None
    ranks_df: float | None
    best: str
    items: list[SystemRank]
    why_not: str = ""


@dataclass(frozen=True)
class SystemAtFit:
    """A system as it was when the run was fitted (labels may change later)."""

    key: str
    label: str
    kind: str


@dataclass(frozen=True)
class ItemEstimate:
    """One system's ability against the reference, with its Wald test and 95% interval."""

    item: str
    estimate: float | None  # None: infinite or not identified (the fit's problems say why)
    se: float | None
    z: float | None
    p: float | None
    ci_low: float | None
    ci_high: float | None
    wins: int
    losses: int
    not_estimable: str = ""  # why the numbers are None although the fit ran ("" when they are fine)


@dataclass(frozen=True)
class EffectEstimate:
    """An extra coefficient (order effect, a covariate) with its Wald test."""

    name: str
    estimate: float | None
    se: float | None
    z: float | None
    p: float | None
    ci_low: float | None
    ci_high: float | None
    not_estimable: str = ""  # why the numbers are None ("" when they are fine)


@dataclass(frozen=True)
class Fit:
    """One Bradley-Terry fit; `items` follow the run's systems."""

    reference: str
    n_comparisons: int
    log_likelihood: float | None
    deviance: float | None
    null_deviance: float | None
    converged: bool
    iterations: int
    items: list[ItemEstimate]
    order_effect: EffectEstimate | None = None
    covariate_effects: list[EffectEstimate] | None = None
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class AlternativeFit:
    """The same data fitted another way (style-controlled, bias-reduced); `fit` None when it cannot be."""

    label: str
    fit: Fit | None
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Interval:
    """Per-system interval of one kind, in the systems' order; it says what it is and what it answers."""

    label: str  # the dashboard's column heading, e.g. "Bootstrap CI"
    answers: str  # the question it answers, in a sentence, e.g. whether other judges would agree
    level: float
    ci_low: list[float | None]
    ci_high: list[float | None]
    se: list[float | None] = field(default_factory=list)
    details: dict[str, int | float | str | None] = field(default_factory=dict)  # e.g. n_boot, n_failed


@dataclass(frozen=True)
class VignetteFit:
    """One vignette's own fit: estimates in the systems' order, and what broke it there."""

    vignette_id: int
    vignette: str
    n_judgments: int
    estimates: list[float | None]
    se: list[float | None]
    wins: list[int]
    losses: list[int]
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SetResult:
    """One vignette set's abilities with the headline test of that set's judgments, in the systems' order."""

    set: str
    n_judgments: int
    n_judges: int
    n_vignettes: int
    estimates: list[float | None]
    se: list[float | None]
    p: list[float | None]
    ci_low: list[float | None]
    ci_high: list[float | None]
    df: list[float | None]
    why_not: str = ""  # why this set has no test ("" when it has one)


@dataclass(frozen=True)
class SetDifference:
    """A system's ability in set `sets[1]` minus its ability in `sets[0]`, with the headline test of that contrast;
    p_holm is Holm's across the systems of the same two sets. The numbers are None where there is no test."""

    system: str
    sets: list[str]
    estimate: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    p: float | None
    p_holm: float | None
    df: float | None


@dataclass(frozen=True)
class BySet:
    """A question's results per vignette set and each system's difference between the first set and each later one
    (analysis/bradley_terry/sets.py); `interval` names the test."""

    interval: str
    level: float
    sets: list[SetResult]
    differences: list[SetDifference]


@dataclass(frozen=True)
class UnitFragility:
    """The fewest units (judgments, judges or vignettes) whose removal, confirmed by refitting with the headline
    test, makes a result not significant or flips its sign; `count` None when none of the sets tried did."""

    unit: str  # "judgment", "judge" or "vignette"
    count: int | None
    of: int
    judgments: int | None  # the judgments those units hold
    of_judgments: int
    approximate: int | None  # what the influence approximation alone said
    refits: int
    words: str  # "holds unless 14 of 2,016 judgments (0.7%) are dropped"


@dataclass(frozen=True)
class ClaimFragility:
    """How fragile one significant result (a system against the reference, by the headline test) is."""

    system: str
    estimate: float
    p: float
    units: list[UnitFragility]


@dataclass(frozen=True)
class QuestionResult:
    """Everything fitted for one question; with no valid judgments only `problems` says why."""

    question: str
    text: str
    position: int  # the question's place in the study (PostgreSQL's jsonb does not keep key order)
    n_judgments: int
    fit: Fit | None
    problems: list[str] = field(default_factory=list)
    n_participants: int = 0
    holm_p: list[float | None] = field(default_factory=list)
    stars: list[str] = field(default_factory=list)
    intervals: dict[str, Interval] = field(default_factory=dict)
    order_effect: EffectEstimate | None = None  # from a fit with the order term, beside the plain estimates
    alternative_fits: dict[str, AlternativeFit] = field(default_factory=dict)
    first_position_rate: float | None = None
    separation_reliability: float | None = None
    split_half_reliability: float | None = None
    by_vignette: list[VignetteFit] = field(default_factory=list)
    headline: Headline | None = None  # None: stored before schema 3 (the table then leads with the Wald interval)
    ranks: Ranks | None = None  # None: a run stored before rank claims, or a question with no fit
    by_set: BySet | None = None  # None: the study's vignettes are one set (or the run was stored before sets)
    fragility: list[ClaimFragility] = field(default_factory=list)  # per significant system; [] when none is


@dataclass(frozen=True)
class Halo:
    """Correlations of the system estimates between questions (a halo effect when near 1)."""

    questions: list[str] = field(default_factory=list)
    matrix: list[list[float | None]] = field(default_factory=list)
    mean_off_diagonal: float | None = None


@dataclass(frozen=True)
class RunResults:
    """A finished run's systems, per-question results (in the study's order) and halo."""

    systems: list[SystemAtFit]
    questions: list[QuestionResult]
    halo: Halo

    def labels(self) -> dict[str, str]:
        return {system.key: system.label for system in self.systems}

    def question(self, key: str) -> QuestionResult | None:
        return next((q for q in self.questions if q.question == key), None)


def stored(value):
    """A dataclass (or list/dict of them) as the plain JSON the AnalysisRun keeps."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: stored(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [stored(v) for v in value]
    if isinstance(value, dict):
        return {str(k): stored(v) for k, v in value.items()}
    return value


class ShapeError(ValueError):
    """Stored JSON that does not fit the current shape: a key renamed without an upgrade, say."""


def build(cls, data):
    """A dataclass from stored JSON, strictly: an unknown key or a missing required one is a ShapeError."""
    return _build(cls, data, cls.__name__)


def _build(kind, data, where: str):
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        errors = []
        for inner in (a for a in args if a is not type(None)):
            try:
                return _build(inner, data, where)
            except ShapeError as exc:
                errors.append(str(exc))
        raise ShapeError("; ".join(errors))
    if origin is list:
        if not isinstance(data, list):
            raise ShapeError(f"{where}: expected a list, found {type(data).__name__}")
        return [_build(args[0], item, f"{where}[{n}]") for n, item in enumerate(data)]
    if origin is dict:
        if not isinstance(data, dict):
            raise ShapeError(f"{where}: expected an object, found {type(data).__name__}")
        return {key: _build(args[1], value, f"{where}.{key}") for key, value in data.items()}
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        if not isinstance(data, dict):
            raise ShapeError(f"{where}: expected an object, found {type(data).__name__}")
        hints = typing.get_type_hints(kind)
        fields = {f.name: f for f in dataclasses.fields(kind)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise ShapeError(f"{where}: unknown keys {unknown}")
        missing = [
            name
            for name, f in fields.items()
            if name not in data and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        if missing:
            raise ShapeError(f"{where}: missing keys {missing}")
        return kind(**{name: _build(hints[name], value, f"{where}.{name}") for name, value in data.items()})
    if kind is float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            raise ShapeError(f"{where}: expected a number, found {data!r}")
        return float(data)
    if kind in (int, str, bool) and not isinstance(data, kind):
        raise ShapeError(f"{where}: expected {kind.__name__}, found {data!r}")
    return data
