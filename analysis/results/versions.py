"""Stored runs in every shape they were ever written in, read as today's RunResults.

`AnalysisRun.schema_version` says which shape a row holds. Reading upgrades the stored JSON one version
at a time (UPGRADES) and then builds the dataclasses strictly, so an old run still shows and a key that
changed without an upgrade fails loudly. When what a fit stores changes: change shapes.py, bump
CURRENT_VERSION and add the step that turns the previous shape into the new one.
"""

from __future__ import annotations

from collections.abc import Callable

from .shapes import ALTERNATIVE_FITS, INTERVAL_KINDS, Halo, QuestionResult, RunResults, SystemAtFit, build, stored

CURRENT_VERSION = 4


def run_fields(fitted: RunResults) -> dict:
    """The AnalysisRun fields that hold a run's results, in the current version: schema_version, systems,
    results (by question key, each with its position) and halo."""
    return {
        "schema_version": CURRENT_VERSION,
        "systems": stored(fitted.systems),
        "results": {question.question: stored(question) for question in fitted.questions},
        "halo": stored(fitted.halo),
    }


def read(*, version: int, systems: list, results: dict, halo: dict) -> RunResults:
    """A run's stored systems, results and halo (in schema `version`) as today's typed RunResults."""
    document: dict = {"systems": systems, "results": results, "halo": halo}
    if version > CURRENT_VERSION:
        raise ValueError(f"Run stored in schema version {version}; this code reads up to {CURRENT_VERSION}.")
    for step in range(version, CURRENT_VERSION):
        document = UPGRADES[step](document)
    questions = [build(QuestionResult, result) for result in document["results"].values()]
    return RunResults(
        systems=[build(SystemAtFit, system) for system in document["systems"]],
        questions=sorted(questions, key=lambda question: question.position),
        halo=build(Halo, document["halo"] or {}),
    )


def _from_1_to_2(document: dict) -> dict:
    """Version 1 (until December 2026): the bootstrap and the style-controlled fit had keys of their own.

    Version 2 keeps intervals by kind and other fits by name, so that further kinds need no new keys.
    Runs from before questions carried a position keep the order they were read in.
    """
    results = {}
    for index, (key, old) in enumerate(document["results"].items()):
        new = {name: value for name, value in old.items() if name not in ("bootstrap", "style_controlled")}
        new.setdefault("question", key)
        new.setdefault("text", "")
        new.setdefault("position", index)
        boot = old.get("bootstrap")
        if boot:
            kind = INTERVAL_KINDS["bootstrap"]
            new["intervals"] = {
                "bootstrap": {
                    "label": kind.label,
                    "answers": kind.answers,
                    "level": boot["level"],
                    "ci_low": boot["ci_low"],
                    "ci_high": boot["ci_high"],
                    "se": boot.get("se") or [],
                    "details": {"n_boot": boot.get("n_boot"), "n_failed": boot.get("n_failed")},
                }
            }
        styled = old.get("style_controlled")
        if styled:
            fitted = styled.get("items") is not None
            new["alternative_fits"] = {
                "style_controlled": {
                    "label": ALTERNATIVE_FITS["style_controlled"],
                    "fit": styled if fitted else None,
                    "problems": [] if fitted else styled.get("problems", []),
                }
            }
        new["by_vignette"] = [{"vignette": str(entry["vignette_id"])} | entry for entry in old.get("by_vignette", [])]
        results[key] = new
    return {**document, "results": results}


def _from_2_to_3(document: dict) -> dict:
    """Version 2 (until December 2026) had no headline interval: its p, Holm p and stars are the Wald ones.

    Nothing is recomputed: the run reads with `headline` None and the dashboard says the table leads with
    the Wald interval, conditional on these answers, until the study is refitted."""
    results = {key: {**old, "headline": None} for key, old in document["results"].items()}
    return {**document, "results": results}


def _from_3_to_4(document: dict) -> dict:
    """Version 3 (until December 2026) led with the two-way interval (t with one df for the question) or, with too
    few vignettes, the judge-robust one, each with p, Holm p and stars.

    Version 4 keeps a df per system (the headline test's Satterthwaite df) and `tested`. Nothing is recomputed:
    a version-3 two-way headline keeps its numbers (its df repeated per system); a judge-robust one could not
    generalise over vignettes, so it is read as untested, without p, Holm p or stars, as today's runs show it."""
    results = {}
    for key, old in document["results"].items():
        headline = old.get("headline")
        if headline is None:
            results[key] = old
            continue
        n = len(headline["se"])
        tested = headline["interval"] != "judge_robust"
        new = {**headline, "df": [headline["df"]] * n, "tested": tested}
        if tested:
            results[key] = {**old, "headline": new}
            continue
        new |= {"p": [None] * n, "why": f"{headline.get('why', '')} No test is shown (refit for today's rule).".strip()}
        results[key] = {**old, "headline": new, "holm_p": [None] * n, "stars": [""] * n}
    return {**document, "results": results}


UPGRADES: dict[int, Callable[[dict], dict]] = {1: _from_1_to_2, 2: _from_2_to_3, 3: _from_3_to_4}
