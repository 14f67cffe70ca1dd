"""Bradley-Terry estimates from LLM judgments alone, and PPI++ estimates calibrated by the human judgments.

Per judge model × question:
- ``llm_fit``: analysis.bradley_terry.fit on the judge's picks only (every order and sample a comparison).
  Its intervals treat the judge as if it were the humans; they are valid only for "what this judge thinks".
- PPI++ (llm_judging/ppi.py): human judgments on the cells the judge judged are the labelled rows, the judge's
  share of picks for answer_a on each cell the prediction; every judged cell is an unlabelled row. The interval
  stays valid for the humans' abilities however biased the judge, and is narrower than the humans' alone
  when the judge predicts them well. ``worth_human_judgments`` is the human sample size that would give
  the PPI standard error on its own (the human-only variance scaled as 1 / n).
Both the PPI and the human-only interval here are vignette-clustered (ppi.py: a vignette's cells share its
answers, so judgments on them are correlated), with t(G - 1), G the vignettes of the estimating equation (the
humans' vignettes, and with lambda > 0 the judge's too). They follow the dashboard's vignette rule
(analysis.bradley_terry.headline_test.MIN_VIGNETTES): with fewer than 3 vignettes no interval is shown and
``why_no_interval`` says why. Where the judge
judged only cells the humans judged, each once, with equal humans per cell, the lambda term cancels: lambda is 0,
PPI is the human-only estimate and the judge is worth nothing (``why_no_help`` says so on the page).
Participants are not a clustering dimension here (each judges few cells, spread over vignettes).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from analysis.bradley_terry import fit
from analysis.bradley_terry.headline_test import MIN_VIGNETTES

from .. import ppi
from ..ppi import PPIResult
from .data import StudyPicks, read_study_picks

MIN_HUMAN = 10  # fewer labelled rows than this: no PPI estimate (the sandwich variance would be meaningless)
MIN_HUMAN_VIGNETTES = 2  # the humans' part of a cluster-robust variance needs at least two of their vignettes


@dataclass(frozen=True)
class EstimateRow:
    question: str
    judge: str
    system: str
    llm_estimate: float | None
    llm_low: float | None
    llm_high: float | None
    ppi_estimate: float | None
    ppi_low: float | None
    ppi_high: float | None
    human_estimate: float | None
    human_low: float | None
    human_high: float | None
    lam: float | None
    n_human: int
    n_cells: int
    worth_human_judgments: float | None
    vignettes: int = 0  # clusters (vignettes) holding the human rows; the interval's t has vignettes - 1 df
    extra_cells: int = 0  # judged cells without a human judgment on this question: where a judge's help comes from
    why_no_interval: str = ""  # why the PPI (or human-only) interval is not shown, in words ("" when it is)


def compared_systems(data: StudyPicks) -> list[str]:
    """Systems in the study's cells (study order), the reference first among equals kept where it is."""
    present = {s for c in data.cells.values() for s in (c.system_a, c.system_b)}
    return [s for s in data.systems if s in present]


def llm_fit(data: StudyPicks, *, judge: str, question: str) -> dict | None:
    """The judge's own Bradley-Terry fit as analysis's result dict ({"items": [...], "reference": ...})."""
    systems = compared_systems(data)
    if data.reference not in systems:
        return None
    index = {s: k for k, s in enumerate(systems)}
    winners, losers = [], []
    for pick in data.llm_by(question, judge):
        cell = data.cells[pick.cell]
        a, b = index[cell.system_a], index[cell.system_b]
        winners.append(a if pick.a_won else b)
        losers.append(b if pick.a_won else a)
    if not winners:
        return None
    result = fit(np.array(winners), np.array(losers), len(systems), reference=index[data.reference], item_names=systems)
    return result.as_dict()


@dataclass(frozen=True)
class Calibrated:
    """PPI++ and human-only results for one judge × question (both vignette-clustered)."""

    ppi: PPIResult
    human: PPIResult
    systems: list[str]  # without the reference, in the results' order
    n_cells: int  # cells the judge judged
    extra_cells: int  # of those, cells without a human judgment on the question


def ppi_results(data: StudyPicks, *, judge: str, question: str) -> Calibrated | None:
    """PPI++ beside the humans-only fit, or None without enough humans (or vignettes) on the judged cells."""
    systems = compared_systems(data)
    if data.reference not in systems or len(systems) < 2:
        return None
    index = {s: k for k, s in enumerate(systems)}
    reference = index[data.reference]
    predicted = defaultdict(list)
    for pick in data.llm_by(question, judge):
        predicted[pick.cell].append(pick.a_won)
    share = {cell: float(np.mean(votes)) for cell, votes in predicted.items()}
    labelled = [p for p in data.human if p.question == question and p.cell in share]
    vignettes = [data.cells[p.cell].vignette for p in labelled]
    if len(labelled) < MIN_HUMAN or len(set(vignettes)) < MIN_HUMAN_VIGNETTES:
        return None

    def rows(cells):
        first = np.array([index[data.cells[c].system_a] for c in cells])
        second = np.array([index[data.cells[c].system_b] for c in cells])
        return ppi.design(first, second, len(systems), reference)

    X = rows([p.cell for p in labelled])
    Y = np.array([p.a_won for p in labelled], float)
    Yhat = np.array([share[p.cell] for p in labelled])
    cells = sorted(share)
    Xu, Yhat_u = rows(cells), np.array([share[c] for c in cells])
    clusters_u = [data.cells[c].vignette for c in cells]
    extra = len(set(cells) - {p.cell for p in labelled})
    # No cell beyond the humans': nothing new to learn from the judge. The lambda term then only reweights the
    # humans' own cells (it cancels exactly when they are balanced), and a lambda tuned on it is noise.
    lam = None if extra else 0.0
    calibrated = ppi.ppi_logistic(X, Y, Yhat, Xu, Yhat_u, lam=lam, clusters=vignettes, clusters_u=clusters_u)
    human = ppi.classical_logistic(X, Y, clusters=vignettes)
    others = [s for s in systems if s != data.reference]
    return Calibrated(calibrated, human, others, len(cells), extra)


def _enough_vignettes(result: PPIResult) -> bool:
    return (result.clusters or 0) >= MIN_VIGNETTES and bool(np.all(np.isfinite(result.se)))


def _why_no_interval(pp: PPIResult, human: PPIResult) -> str:
    """Why an interval is withheld, in words: the dashboard's rule (too few vignettes to generalise over)."""
    if _enough_vignettes(pp) and _enough_vignettes(human):
        return ""
    counted = pp.clusters if not _enough_vignettes(pp) else human.clusters
    which = "PPI and human-only intervals" if not _enough_vignettes(pp) else "human-only interval"
    return (
        f"No {which}: only {counted} vignette{'' if counted == 1 else 's'} in the estimating equation; results cannot "
        f"be generalised to other vignettes from fewer than {MIN_VIGNETTES}."
    )


def why_no_help(row: EstimateRow) -> str | None:
    """Why this judge adds nothing to the humans here (lambda 0), in words; None when it helps or was not fitted."""
    if row.lam is None or row.lam > 0:
        return None
    if row.extra_cells == 0:
        return (
            "it judged only cells the humans judged, so its picks on the humans' cells and on all its cells are the "
            "same picks and cancel (PPI equals the humans' estimate); a judge helps only on cells no human judged"
        )
    return (
        "its picks do not predict the humans' picks beyond the systems' abilities (the tuned weight λ is 0), "
        "so the humans' estimate is kept"
    )


def estimate_rows(*, study, data: StudyPicks | None = None) -> list[EstimateRow]:
    """One row per question × judge × system other than the reference."""
    data = data or read_study_picks(study=study)
    rows = []
    for question in data.questions:
        for judge in data.judges:
            own = llm_fit(data, judge=judge.key, question=question)
            own_items = {item["item"]: item for item in (own or {}).get("items", [])}
            calibrated = ppi_results(data, judge=judge.key, question=question)
            systems = calibrated.systems if calibrated else [s for s in compared_systems(data) if s != data.reference]
            for k, system in enumerate(systems):
                item = own_items.get(system, {})
                rows.append(row(question, judge.key, system, item, calibrated, k))
    return rows


def row(question, judge, system, item, calibrated: Calibrated | None, k) -> EstimateRow:
    values: dict[str, Any] = dict(ppi_estimate=None, ppi_low=None, ppi_high=None, human_estimate=None, human_low=None)
    values.update(human_high=None, lam=None, n_human=0, n_cells=0, worth_human_judgments=None)
    if calibrated:
        pp, human = calibrated.ppi, calibrated.human
        ppi_shown, human_shown = _enough_vignettes(pp), _enough_vignettes(human)
        values.update(
            ppi_estimate=float(pp.estimate[k]),
            ppi_low=float(pp.ci_low[k]) if ppi_shown else None,
            ppi_high=float(pp.ci_high[k]) if ppi_shown else None,
            human_estimate=float(human.estimate[k]),
            human_low=float(human.ci_low[k]) if human_shown else None,
            human_high=float(human.ci_high[k]) if human_shown else None,
            why_no_interval=_why_no_interval(pp, human),
            lam=pp.lam,
            n_human=pp.n,
            n_cells=calibrated.n_cells,
            worth_human_judgments=float(ppi.worth_human_judgments(pp.n, human.se[k], pp.se[k])),
            vignettes=pp.clusters or 0,
            extra_cells=calibrated.extra_cells,
        )
    return EstimateRow(
        question=question,
        judge=judge,
        system=system,
        llm_estimate=item.get("estimate"),
        llm_low=item.get("ci_low"),
        llm_high=item.get("ci_high"),
        **values,
    )
