"""Power of the test the dashboard reports, found by running that very test on simulated studies.

Each simulated study is what a researcher would collect: every system pair on every vignette, `repetitions`
judgments each, dealt to judges `pairs_per_judge` at a time on different vignettes, shown in a random order
with a position effect (`order_effect`, log-odds for the answer shown first), the answer of system k on
vignette v better or worse than its system by u_vk ~ N(0, answer_sd^2) (answer-level SD tau). Then the
dashboard's own test runs on it, one call (`reported_p`): the headline interval's p for each system against
the reference, Holm within the question, at alpha / questions. Power is the chance that a system with a true
effect is declared different, averaged over those systems; a study where the dashboard shows no test (too
few vignettes, one judge, a variance the design cannot estimate) rejects nothing.

The simulation runs in batches, batch b on the generator `default_rng([seed, b])`, and a `Tally` adds up:
so a stopped simulation resumes where it stopped (analysis/tasks.py) and gives the same figures.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from analysis import bradley_terry as bt

from .design import abilities_for

BATCH = 50  # simulated studies between two saves of a resumable run
TARGET = 0.8
MAX_VIGNETTES = 200  # the vignettes lever's search stops here ("more than 200 vignettes")
MAX_REPETITIONS = 200  # the judges lever's: judgments per system pair x vignette
INTERVAL = "the headline test (CR2 over vignettes × judge design effect, Satterthwaite df), Holm within a question"


@dataclass(frozen=True)
class Design:
    """A planned study, as the power page and `manage.py power` take it; the reference system first."""

    abilities: tuple[float, ...]
    vignettes: int
    repetitions: int  # judgments of each system pair on each vignette
    pairs_per_judge: int = 5
    answer_sd: float = 0.0
    order_effect: float = 0.0
    alpha: float = 0.05
    questions: int = 1

    def __post_init__(self) -> None:
        if len(self.abilities) < 2:
            raise ValueError("at least two systems are needed.")
        if min(self.vignettes, self.repetitions, self.pairs_per_judge, self.questions) < 1:
            raise ValueError("vignettes, repetitions, pairs per judge and questions must be at least 1.")
        if self.answer_sd < 0:
            raise ValueError("the answer-level SD cannot be negative.")
        if not 0 < self.alpha < 1:
            raise ValueError("alpha must lie between 0 and 1.")

    @classmethod
    def of(cls, *, systems: int = 7, gap: float = 0.4, spacing: str = "even", abilities=None, **rest) -> Design:
        """From a number of systems and a gap (evenly spread or one best), or explicit abilities."""
        truth = abilities_for(systems, gap, spacing) if abilities is None else np.asarray(abilities, float)
        return cls(abilities=tuple(float(a) for a in truth - truth[0]), **rest)

    @property
    def systems(self) -> int:
        return len(self.abilities)

    @property
    def judgments(self) -> int:
        """Judgments per question."""
        return self.systems * (self.systems - 1) // 2 * self.vignettes * self.repetitions

    @property
    def judges(self) -> int:
        return math.ceil(self.judgments / self.pairs_per_judge)

    def as_dict(self) -> dict:
        return asdict(self) | {"abilities": list(self.abilities), "judges": self.judges, "judgments": self.judgments}


@dataclass(frozen=True)
class Outcome:
    """The dashboard's test on one study: Holm-adjusted p per system (the reference's nan), or why none."""

    holm_p: np.ndarray | None
    df: float | None
    why_no_test: str = ""


def reported_p(study: bt.SimulatedJudgments, n_items: int, *, reference: int = 0) -> Outcome:
    """The test the dashboard reports, on one study's judgments: `headline_test` (its plain Bradley-Terry
    estimates, as the dashboard fits them: the order effect is reported beside them, not in them), then Holm."""
    test = bt.headline_test(
        study.winners, study.losers, n_items, reference=reference, judges=study.judges, vignettes=study.vignettes
    )
    df = np.delete(test.df, reference)
    mean_df = float(np.mean(df[np.isfinite(df)])) if np.isfinite(df).any() else None
    if test.why_not:
        return Outcome(None, mean_df, test.why_not)
    return Outcome(bt.holm(test.p), mean_df)


@dataclass
class Tally:
    """Running counts over simulated studies; two tallies of one design add up (`merged`)."""

    studies: int = 0
    rejections: list[int] = field(default_factory=list)  # per tested system (not the reference)
    detected_share: float = 0.0  # sum over studies of the share of true effects found
    detected_share_sq: float = 0.0
    any_detected: int = 0
    all_detected: int = 0
    false_positive: int = 0  # studies declaring a system without a true effect different
    untested: int = 0  # studies where the dashboard shows no test
    df_sum: float = 0.0
    df_count: int = 0

    def add(self, rejected: np.ndarray, real: np.ndarray, outcome: Outcome) -> None:
        if not self.rejections:
            self.rejections = [0] * len(rejected)
        self.studies += 1
        self.rejections = [count + int(hit) for count, hit in zip(self.rejections, rejected, strict=True)]
        if real.any():
            share = float(rejected[real].mean())
            self.detected_share += share
            self.detected_share_sq += share * share
            self.any_detected += int(rejected[real].any())
            self.all_detected += int(rejected[real].all())
        self.false_positive += int(rejected[~real].any())
        self.untested += int(outcome.holm_p is None)
        if outcome.df is not None:
            self.df_sum += float(outcome.df)
            self.df_count += 1

    def merged(self, other: Tally) -> Tally:
        if not self.studies:
            return replace(other)
        if not other.studies:
            return replace(self)
        added = {
            name: getattr(self, name) + getattr(other, name)
            for name in self.__dataclass_fields__
            if name != "rejections"
        }
        return Tally(rejections=[a + b for a, b in zip(self.rejections, other.rejections, strict=True)], **added)

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Tally:
        return cls(**data)


@dataclass(frozen=True)
class ReportedTestPower:
    """Power of the reported test at one design."""

    design: Design
    power: float  # mean over systems with a true effect of the chance of declaring it different
    mc_se: float
    per_system: list[float]  # systems after the reference
    any_detected: float | None
    all_detected: float | None
    false_positive_rate: float | None  # some system without a true effect declared different
    untested: float  # share of studies where the dashboard shows no test
    df: float | None  # mean degrees of freedom of the test
    simulations: int
    seed: int
    interval: str = INTERVAL

    def as_dict(self) -> dict:
        return {
            "test": "reported",
            "interval": self.interval,
            "power": self.power,
            "mc_se": self.mc_se,
            "per_system": self.per_system,
            "effects": list(self.design.abilities[1:]),
            "any_detected": self.any_detected,
            "all_detected": self.all_detected,
            "false_positive_rate": self.false_positive_rate,
            "untested": self.untested,
            "df": self.df,
            "simulations": self.simulations,
            "seed": self.seed,
        } | self.design.as_dict()


def simulate_batch(design: Design, *, seed: int, batch: int, size: int = BATCH) -> Tally:
    """`size` simulated studies of `design` on the generator of batch `batch`, tested as the dashboard does."""
    rng = np.random.default_rng([seed, batch])
    truth = np.asarray(design.abilities)
    real = truth[1:] != 0
    alpha = design.alpha / design.questions
    tally = Tally()
    for _ in range(size):
        study = bt.simulate_judgments(
            truth,
            vignettes=design.vignettes,
            repetitions=design.repetitions,
            rng=rng,
            per_judge=design.pairs_per_judge,
            answer_sd=design.answer_sd,
            order_effect=design.order_effect,
        )
        outcome = reported_p(study, len(truth))
        rejected = np.zeros(len(truth) - 1, bool) if outcome.holm_p is None else outcome.holm_p[1:] <= alpha
        tally.add(rejected, real, outcome)
    return tally


def batches(simulations: int, size: int = BATCH) -> list[int]:
    """The sizes of the batches `simulations` studies are run in."""
    return [min(size, simulations - start) for start in range(0, simulations, size)]


def simulate(
    design: Design, *, simulations: int, seed: int, tally: Tally | None = None, after_batch: Callable | None = None
) -> ReportedTestPower:
    """Power of the reported test at `design`; `tally` holds the batches already done (a resumed run), and
    `after_batch(tally)` is called after each new one (to save it)."""
    if simulations < 1:
        raise ValueError("simulations must be at least 1.")
    tally = tally or Tally()
    sizes = batches(simulations)
    done = sum(sizes[: _batches_done(tally, sizes)])
    if done != tally.studies:
        raise ValueError("the saved tally does not end on a batch: start the simulation again.")
    for index in range(_batches_done(tally, sizes), len(sizes)):
        tally = tally.merged(simulate_batch(design, seed=seed, batch=index, size=sizes[index]))
        if after_batch is not None:
            after_batch(tally)
    return summary(design, tally, seed=seed)


def _batches_done(tally: Tally, sizes: Sequence[int]) -> int:
    total = 0
    for index, size in enumerate(sizes):
        if total >= tally.studies:
            return index
        total += size
    return len(sizes)


def summary(design: Design, tally: Tally, *, seed: int) -> ReportedTestPower:
    n = tally.studies
    real = np.asarray(design.abilities[1:]) != 0
    power = tally.detected_share / n if real.any() else math.nan
    variance = (tally.detected_share_sq / n - power * power) * n / (n - 1) if n > 1 and real.any() else math.nan
    return ReportedTestPower(
        design=design,
        power=power,
        mc_se=math.sqrt(max(variance, 0.0) / n) if math.isfinite(variance) else math.nan,
        per_system=[count / n for count in tally.rejections],
        any_detected=tally.any_detected / n if real.any() else None,
        all_detected=tally.all_detected / n if real.any() else None,
        false_positive_rate=tally.false_positive / n if (~real).any() else None,
        untested=tally.untested / n,
        df=tally.df_sum / tally.df_count if tally.df_count else None,
        simulations=n,
        seed=seed,
    )


def reported_test_power(design: Design, *, simulations: int = 1000, seed: int = 1) -> ReportedTestPower:
    return simulate(design, simulations=simulations, seed=seed)
