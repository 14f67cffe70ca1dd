"""What the judges measured on a study are worth for planning the next one (the power page's judge inputs).

For each judge model that judged the study: its agreement with the human majority (mean over questions, as the
agreement table reports) and rho, the per-pick correlation that PPI++'s saving starts from (analysis/power/judge.py
turns it into the correlation with a cell's mean of humans, and saves nothing without judged cells beyond the
humans'), measured directly: between each human pick and the judge's share of picks for answer_a on that cell, both
centred within the cell's system pair, since only the within-pair part of a human label can be predicted to
any use. Also the humans' own agreement with their cell's majority (the other humans on the cell, ties left
out), which the power page's two-point model needs when only an agreement is typed in.

The power page lives in analysis, which never imports llm_judging: `measured_on_study` reaches it through
analysis.services.measured_judges, where this app registers it (apps.py) and where the shapes it returns
are defined.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from analysis.services.measured_judges import MeasuredJudge, StudyMeasurements
from surveys.models import Study

from .agreement import agreement_rows, majority
from .data import StudyPicks, read_study_picks

MIN_PICKS = 10  # fewer human picks on judged cells than this: rho is not measured


def measured_on_study(*, study: Study, data: StudyPicks | None = None) -> StudyMeasurements:
    data = data or read_study_picks(study=study)
    agreements = defaultdict(list)
    for row in agreement_rows(study=study, data=data):
        if row.agreement is not None:
            agreements[row.judge].append(row.agreement)
    judges = []
    for judge in data.judges:
        rhos, picks = [], 0
        for question in data.questions:
            rho, used = within_pair_correlation(data, judge=judge.key, question=question)
            picks += used
            if rho is not None:
                rhos.append(rho)
        judged = {p.cell for p in data.llm if p.judge == judge.key}
        judges.append(
            MeasuredJudge(
                key=judge.key,
                agreement=float(np.mean(agreements[judge.key])) if agreements[judge.key] else None,
                rho=float(np.mean(rhos)) if rhos else None,
                cells=len(judged),
                human_picks=picks,
            )
        )
    return StudyMeasurements(human_agreement=human_agreement_with_majority(data), judges=judges)


def within_pair_correlation(data: StudyPicks, *, judge: str, question: str) -> tuple[float | None, int]:
    """(rho, human picks used): Corr(human pick, judge's share for answer_a on the cell), centred per pair."""
    votes = defaultdict(list)
    for pick in data.llm_by(question, judge):
        votes[pick.cell].append(pick.a_won)
    rows = [(p.cell, float(p.a_won), float(np.mean(votes[p.cell]))) for p in data.human if p.question == question]
    rows = [row for row in rows if row[0] in votes]
    if len(rows) < MIN_PICKS:
        return None, len(rows)
    pair_of = {cell: (info.system_a, info.system_b) for cell, info in data.cells.items()}
    by_pair = defaultdict(list)
    for k, (cell, _y, _yhat) in enumerate(rows):
        by_pair[pair_of[cell]].append(k)
    y, yhat = np.array([r[1] for r in rows]), np.array([r[2] for r in rows])
    for members in by_pair.values():
        y[members] -= y[members].mean()
        yhat[members] -= yhat[members].mean()
    spread = float(np.sqrt((y**2).sum() * (yhat**2).sum()))
    return (float((y * yhat).sum()) / spread if spread > 0 else 0.0), len(rows)


def human_agreement_with_majority(data: StudyPicks) -> float | None:
    """Share of human picks that agree with the majority of the other humans on their cell and question."""
    by_cell = defaultdict(list)
    for pick in data.human:
        by_cell[(pick.cell, pick.question)].append(pick.a_won)
    agree = []
    for votes in by_cell.values():
        for k, vote in enumerate(votes):
            others = majority(votes[:k] + votes[k + 1 :]) if len(votes) > 1 else None
            if others is not None:
                agree.append(vote == others)
    return float(np.mean(agree)) if agree else None
