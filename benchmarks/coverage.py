"""Coverage of the headline test's interval, scored against its estimand, on simulated studies refitted as a refit fits.

Run (small: the machine is shared; each cell refits `--replications` studies through the project's own
fitting, analysis.services.fitting.fit_question, exactly as a refit does):

    nice python benchmarks/coverage.py --replications 200 --answer-sd 0 0.4 0.6 --vignettes 3 6 12 \\
        --missing 0 0.4 [--design seed]

The grid: answer SD τ (each answer's quality departs from its system's ability by N(0, τ²)), vignettes, and the
share of system × vignette answers missing (`--missing 0.4`: each system's answer on each vignette is absent
with probability 0.4, and every judgment of a pair involving it is dropped: unequal vignettes). "seed" is the
seed study's design: 7 systems, every pair on every vignette 8 times, 5 pairs per judge (about 400 judges at 12
vignettes); "small" is 4 systems, 4 times per cell. Planted abilities put two systems at the reference's
level (true nulls) and the others 0.3-0.6 log-odds from it.

The estimand (docs/statistics.md, "The estimand"): the population-averaged Bradley-Terry ability, the fit of
the model to P(i beats j) averaged over answer effects (`population_abilities`: exact by Gauss-Hermite
quadrature), not the planted ability of a typical answer, which plain Bradley-Terry does not estimate when τ > 0.
Missing answers at random leave it unchanged.

Printed per cell (Markdown): the headline's coverage of the estimand where the headline test is shown (95%
intervals of the systems against the reference; intervals counted), its coverage of the planted values, the
share of studies with a test, the median and smallest Satterthwaite df, the smallest headline SE as a multiple
of the Wald SE, the family-wise error of the headline's Holm decisions (any true null rejected), and beside
them the Wald and the previous two-way (t with vignettes - 1 df) intervals' coverage of the estimand.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis import bradley_terry as bt  # noqa: E402  (pure numpy: no Django needed)

DESIGNS = {
    "seed": {"abilities": [0.0, 0.0, 0.0, 0.3, 0.4, -0.3, 0.6], "repetitions": 8},
    "small": {"abilities": [0.0, 0.0, 0.4, -0.3], "repetitions": 4},
}
ALPHA = 0.05
COLUMNS = [
    "design", "τ", "vignettes", "missing", "studies", "tested", "headline covers estimand", "covers planted",
    "df median (min)", "smallest SE / Wald SE", "FWER Holm", "Wald covers estimand", "old two-way covers estimand",
]  # fmt: skip


def setup_django() -> None:
    """The fitting code lives in a Django app: set it up on a throwaway SQLite file (nothing is written)."""
    os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='mj-coverage-')}/unused.sqlite3"
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()


def population_abilities(abilities, answer_sd: float) -> np.ndarray:
    """The estimand: the Bradley-Terry abilities (reference 0) of the win probabilities averaged over answer effects,
    P(i beats j) = E[expit(l_i - l_j + u_i - u_j)], u ~ N(0, answer_sd^2), every pair weighted alike."""
    abilities = np.asarray(abilities, float)
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)  # probabilists': E f(Z) = sum w f(z) / sqrt(2 pi)
    weights = weights / weights.sum()
    first, second = np.triu_indices(len(abilities), k=1)
    difference = abilities[first] - abilities[second]
    spread = np.sqrt(2.0) * answer_sd
    won = (1.0 / (1.0 + np.exp(-(difference[:, None] + spread * nodes[None, :])))) @ weights
    scale = 1e6  # expected counts per pair: fit() takes fractional weights
    winners = np.r_[first, second]
    losers = np.r_[second, first]
    counts = np.r_[won, 1.0 - won] * scale
    fitted = bt.fit(winners, losers, len(abilities), reference=0, counts=counts)
    return np.asarray(fitted.estimates, float)


def one_study(design: dict, *, answer_sd: float, vignettes: int, missing: float, rng):
    """Simulate one study (answers missing at random) and fit it as a refit does: the question's stored result."""
    from analysis.services.fitting import DEFAULT_PARAMETERS, fit_question
    from analysis.services.reading import QuestionData

    abilities = np.array(design["abilities"])
    sim = bt.simulate_judgments(
        abilities, vignettes=vignettes, repetitions=design["repetitions"], rng=rng, per_judge=5, answer_sd=answer_sd
    )
    present = rng.random((vignettes, len(abilities))) >= missing  # each system's answer on each vignette
    keep = present[sim.vignettes, sim.winners] & present[sim.vignettes, sim.losers]
    data = QuestionData("q", "", sim.winners[keep], sim.losers[keep], sim.first[keep], sim.judges[keep],
                        sim.vignettes[keep], np.zeros(int(keep.sum())))  # fmt: skip
    systems = [{"key": f"s{k}", "label": f"s{k}", "kind": "llm"} for k in range(len(abilities))]
    parameters = DEFAULT_PARAMETERS | {"bootstrap": 0, "split_halves": 0, "seed": int(rng.integers(1 << 30))}
    return fit_question(data, systems=systems, reference=0, parameters=parameters, position=0, vignette_keys={})


def run_cell(design_name: str, *, answer_sd, vignettes, missing, replications, seed) -> dict:
    design = DESIGNS[design_name]
    planted = np.array(design["abilities"]) - design["abilities"][0]
    estimand = population_abilities(planted, answer_sd)
    null = [k for k in range(1, len(planted)) if planted[k] == 0]
    rng = np.random.default_rng([seed, int(answer_sd * 100), vignettes, int(missing * 100)])
    tally = dict.fromkeys(["covered", "planted", "counted", "wald", "wald_n", "two_way", "two_way_n"], 0)
    tested = holm_errors = 0
    dfs, ratios = [], []
    for _ in range(replications):
        result = one_study(design, answer_sd=answer_sd, vignettes=vignettes, missing=missing, rng=rng)
        if result.fit is None:
            continue
        headline = result.headline
        tested += bool(headline and headline.tested)
        holm_errors += any(result.holm_p[k] is not None and result.holm_p[k] < ALPHA for k in null)
        two_way = result.intervals.get("two_way_robust")
        for k in range(1, len(planted)):
            item = result.fit.items[k]
            if item.ci_low is not None:
                tally["wald_n"] += 1
                tally["wald"] += item.ci_low <= estimand[k] <= item.ci_high
            if two_way and two_way.ci_low[k] is not None:
                tally["two_way_n"] += 1
                tally["two_way"] += two_way.ci_low[k] <= estimand[k] <= two_way.ci_high[k]
            if not (headline and headline.tested) or headline.ci_low[k] is None:
                continue
            low, high = headline.ci_low[k], headline.ci_high[k]
            tally["counted"] += 1
            tally["covered"] += low <= estimand[k] <= high
            tally["planted"] += low <= planted[k] <= high
            dfs.append(headline.df[k])
            if item.se:
                ratios.append(headline.se[k] / item.se)
    return {
        "studies": replications,
        "tested": tested / replications,
        "coverage": _share(tally["covered"], tally["counted"]),
        "planted": _share(tally["planted"], tally["counted"]),
        "counted": tally["counted"],
        "df": (float(np.median(dfs)), float(np.min(dfs))) if dfs else None,
        "smallest_ratio": float(np.min(ratios)) if ratios else None,
        "fwer_holm": holm_errors / replications,
        "wald": _share(tally["wald"], tally["wald_n"]),
        "two_way": _share(tally["two_way"], tally["two_way_n"]),
        "estimand": estimand,
    }


def _share(hits: int, count: int) -> float | None:
    return hits / count if count else None


def table_header() -> str:
    return "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS)


def table_row(cell: tuple, out: dict) -> str:
    def share(value):
        return "–" if value is None else f"{value:.3f}"

    df = "–" if out["df"] is None else f"{out['df'][0]:.1f} ({out['df'][1]:.1f})"
    said = [*map(str, cell), str(out["studies"]), share(out["tested"]), f"{share(out['coverage'])} ({out['counted']})",
            share(out["planted"]), df, share(out["smallest_ratio"]), share(out["fwer_holm"]), share(out["wald"]),
            share(out["two_way"])]  # fmt: skip
    return "| " + " | ".join(said) + " |"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replications", type=int, default=200, help="studies per cell (default 200)")
    parser.add_argument("--answer-sd", type=float, nargs="+", default=[0.0, 0.4, 0.6])
    parser.add_argument("--vignettes", type=int, nargs="+", default=[3, 6, 12])
    parser.add_argument("--missing", type=float, nargs="+", default=[0.0, 0.4])
    parser.add_argument("--design", nargs="+", choices=list(DESIGNS), default=["seed"])
    parser.add_argument("--seed", type=int, default=20261204)
    args = parser.parse_args(argv)
    setup_django()
    for design in args.design:
        planted = np.array(DESIGNS[design]["abilities"])
        for tau in args.answer_sd:
            said = ", ".join(f"{value:.3f}" for value in population_abilities(planted, tau))
            print(f"Estimand ({design}, τ = {tau}): population-averaged abilities [{said}]")
    print(f"\n{args.replications} replications per cell; coverage of 95% intervals (intervals counted).\n")
    print(table_header(), flush=True)
    for cell in itertools.product(args.design, args.answer_sd, args.vignettes, args.missing):
        design, answer_sd, vignettes, missing = cell
        out = run_cell(design, answer_sd=answer_sd, vignettes=vignettes, missing=missing,
                       replications=args.replications, seed=args.seed)  # fmt: skip
        print(table_row(cell, out), flush=True)


if __name__ == "__main__":
    main()
