"""Judge quality beyond the attention check: four measures per judge, flags with reasons, and a sensitivity fit.

Per judge (valid judgments only, docs/authenticity.md):
- first-position share: the share of picks of the answer shown first (about 0.5 for a careful judge);
- straight-lining: the same position picked on all questions of every page (two pages or more). A careful
  judge does this too when one answer is better on every question, so it is a flag only when the judge's
  picks also fit the consensus (below) worse than the median judge's;
- speed: the judge's median seconds per page over the study's median of those medians;
- agreement: on each question of each page, whether the pick agrees with the majority of the *other* judges
  of the same cell (pair × vignette) on that question; ties and cells judged by no one else do not count;
- consensus fit: the sum, over the judge's picks, of log2(2 p) where p is the chance of that pick under the
  Bradley–Terry fit of all judges (per question, with the order effect): the evidence, in bits, that the
  consensus explains the picks better than coin flips. A coin-flipping judge loses bits on average, a careful
  one gains; clear pairs weigh more than close ones, so it needs fewer picks than the majority agreement.
  Shown per pick (the mean); flagged when the sum is at most -2 bits (coin flips explain the picks at least
  four times better).

A judge is flagged when one measure passes its threshold (below; the majority agreement is shown only). Flags are for the researcher's review;
they never exclude or reject anyone. The sensitivity row per question fits the same model without the
flagged judges, so a reader sees whether they move the estimates.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from django.core.exceptions import ValidationError

from surveys.models import Judgment, Study, question_label

from ..bradley_terry.fitting import fit
from .reading import StudyData, read_study_data

FIRST_SHARE_FLAG = 0.9  # of at least MIN_JUDGMENTS picks
MIN_JUDGMENTS = 10
SPEED_FLAG = 0.33  # a third of the study's median time per page, or less
AGREEMENT_FLAG = 0.35  # agreeing with the others' majority this rarely, over MIN_COMPARED picks
CONSENSUS_FLAG_BITS = -2.0  # coin flips explain the picks at least 2**2 = 4 times better than the consensus
MIN_COMPARED = 10
MAX_JUDGMENTS_READ = 100_000  # beyond this the dashboard says so rather than computing on every view


@dataclass
class JudgeQuality:
    participant_id: int
    prolific_pid: str
    judgments: int = 0
    first_share: float | None = None
    straight_lining: bool = False
    speed_ratio: float | None = None
    agreement: float | None = None
    compared: int = 0
    consensus: float | None = None  # bits per pick
    consensus_picks: int = 0
    reasons: list[str] = field(default_factory=list)


def _rows(study: Study):
    return (
        Judgment.objects.valid()
        .for_study(study)
        .values_list(
            "assignment__participant_id",
            "assignment__participant__prolific_pid",
            "assignment_id",
            "assignment__cell_id",
            "question_id",
            "winner_position",
            "winner_id",
            "assignment__seconds",
        )
    )


def judge_measures(*, study: Study, data: StudyData | None = None) -> list[JudgeQuality]:
    """Every judge's four measures and, for the flagged, the reasons in words; most reasons first."""
    judges: dict[int, JudgeQuality] = {}
    pages: dict[int, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))  # judge → page → positions
    seconds: dict[int, dict[int, float]] = defaultdict(dict)
    votes: dict[tuple[int, int], dict[int, int]] = defaultdict(lambda: defaultdict(int))  # cell, q → winner → n
    picks = []
    for who, pid, page, cell, question, position, winner, page_seconds in _rows(study):
        judge = judges.setdefault(who, JudgeQuality(who, pid))
        judge.judgments += 1
        pages[who][page].append(position)
        if page_seconds is not None:
            seconds[who][page] = page_seconds
        votes[(cell, question)][winner] += 1
        picks.append((who, cell, question, winner))
    _agreement(judges, votes, picks)
    for who, (score, n) in consensus_scores(data or read_study_data(study=study)).items():
        if who in judges:
            judges[who].consensus, judges[who].consensus_picks = score, n
    scores = [j.consensus for j in judges.values() if j.consensus is not None]
    median_consensus = float(np.median(scores)) if scores else None
    medians = {who: float(np.median(list(s.values()))) for who, s in seconds.items() if s}
    study_median = float(np.median(list(medians.values()))) if medians else None
    for who, judge in judges.items():
        positions = [p for page in pages[who].values() for p in page]
        judge.first_share = positions.count("first") / len(positions)
        judge.straight_lining = len(pages[who]) >= 2 and all(len(set(p)) == 1 for p in pages[who].values())
        if study_median and who in medians:
            judge.speed_ratio = medians[who] / study_median
        judge.reasons = _reasons(judge, median_consensus)
    return sorted(judges.values(), key=lambda j: (-len(j.reasons), j.agreement if j.agreement is not None else 1))


def _agreement(judges, votes, picks) -> None:
    agreed: dict[int, int] = defaultdict(int)
    for who, cell, question, winner in picks:
        others = dict(votes[(cell, question)])
        others[winner] -= 1  # leave this judge's own pick out
        ranked = sorted(others.values(), reverse=True)
        if not ranked or ranked[0] == 0 or (len(ranked) > 1 and ranked[0] == ranked[1]):
            continue  # no one else, or a tie: no majority to agree with
        judges[who].compared += 1
        agreed[who] += others.get(winner, 0) == ranked[0]
    for who, judge in judges.items():
        if judge.compared:
            judge.agreement = agreed[who] / judge.compared


def _reasons(judge: JudgeQuality, median_consensus: float | None) -> list[str]:
    reasons = []
    fits_worse = judge.consensus is None or median_consensus is None or judge.consensus < median_consensus
    if judge.judgments >= MIN_JUDGMENTS and judge.first_share is not None and judge.first_share >= FIRST_SHARE_FLAG:
        reasons.append(f"picked the answer shown first {judge.first_share:.0%} of the time")
    if judge.straight_lining and fits_worse:
        reasons.append("picked the same side on all questions of every page")
    if judge.speed_ratio is not None and judge.speed_ratio <= SPEED_FLAG:
        reasons.append(f"took {judge.speed_ratio:.2f}× the study's median time per page")
    if judge.consensus is not None and judge.consensus * judge.consensus_picks <= CONSENSUS_FLAG_BITS:
        bits = judge.consensus * judge.consensus_picks
        reasons.append(f"coin flips explain the picks better than the judges' consensus ({bits:.1f} bits)")
    return reasons


def consensus_scores(data: StudyData) -> dict[int, tuple[float, int]]:
    """{participant id: (mean log2(2 p) of their picks under each question's fit of all judges, picks)}."""
    totals: dict[int, list[float]] = defaultdict(lambda: [0.0, 0])
    for question in data.questions:
        if not len(question.winners):
            continue
        winners, losers = np.asarray(question.winners, np.int64), np.asarray(question.losers, np.int64)
        first = np.asarray(question.first, np.int64)
        result = fit(winners, losers, len(data.systems), reference=data.reference, first=first)
        order = result.order_effect.estimate if result.order_effect else 0.0
        margin = result.estimates[winners] - result.estimates[losers] + order * np.where(first == winners, 1, -1)
        known = np.isfinite(margin)
        scores = np.log2(2 / (1 + np.exp(-np.clip(margin[known], -30, 30))))
        for who, score in zip(question.clusters[known], scores, strict=True):
            totals[int(who)][0] += float(score)
            totals[int(who)][1] += 1
    return {who: (total / n, int(n)) for who, (total, n) in totals.items() if n}


@dataclass(frozen=True)
class SensitivityRow:
    question: str  # the question's short label
    without: int  # flagged judges left out
    largest_change: float | None  # the largest change of any system's estimate (log-odds)
    changes: list[tuple[str, float | None, float | None]]  # system label, with all judges, without the flagged


def sensitivity(*, study: Study, data: StudyData, flagged: set[int]) -> list[SensitivityRow]:
    """Per question, each system's estimate with every judge and without the flagged ones (plain ML fits)."""
    labels = [s["label"] for s in data.systems]
    question_labels = {q.key: question_label(q.key, q.label) for q in study.questions.all()}
    rows = []
    for question in data.questions:
        keep = ~np.isin(question.clusters, list(flagged))
        both = [_estimates(question, data, np.ones_like(keep)), _estimates(question, data, keep)]
        changes = [(labels[k], _number(both[0][k]), _number(both[1][k])) for k in range(len(labels))]
        differences = [abs(a - b) for _, a, b in changes if a is not None and b is not None]
        rows.append(
            SensitivityRow(
                question_labels.get(question.key, question.key),
                len(flagged),
                max(differences) if differences else None,
                changes,
            )
        )
    return rows


def _estimates(question, data, rows: np.ndarray) -> np.ndarray:
    if not rows.any():
        return np.full(len(data.systems), np.nan)
    result = fit(
        np.asarray(question.winners[rows], np.int64),
        np.asarray(question.losers[rows], np.int64),
        len(data.systems),
        reference=data.reference,
        first=np.asarray(question.first[rows], np.int64),
    )
    return result.estimates


def _number(value) -> float | None:
    return None if value is None or not np.isfinite(value) else round(float(value), 3)


def quality_summary(*, study: Study) -> dict:
    """What the dashboard shows: the flagged judges with their reasons and the sensitivity rows."""
    total = Judgment.objects.valid().for_study(study).count()
    summary = {"judgments": total, "too_many": total > MAX_JUDGMENTS_READ, "judges": [], "flagged": [], "rows": []}
    if total == 0 or summary["too_many"]:
        return summary
    try:
        data = read_study_data(study=study)
    except ValidationError as exc:  # no reference system yet: nothing can be fitted, so nothing measured
        return summary | {"problem": " ".join(exc.messages)}
    judges = judge_measures(study=study, data=data)
    flagged = [j for j in judges if j.reasons]
    rows = sensitivity(study=study, data=data, flagged={j.participant_id for j in flagged}) if flagged else []
    return summary | {"judges": judges, "flagged": flagged, "rows": rows}
