"""Coverage of every interval kind, and the family-wise error of the Holm decisions, on simulated studies.

Run (small: the machine is shared; each cell refits `--replications` studies through the project's own
fitting, analysis.services.fitting.fit_question, exactly as a refit does):

    nice python benchmarks/coverage.py --replications 30 --answer-sd 0 0.4 --vignettes 3 6 12 \\
        --inattentive 0 --design seed [--bootstrap 0]

The grid: answer SD (each answer's quality departs from its system's ability by N(0, SD^2)), vignettes,
share of inattentive judges (they pick at random) and the design: "seed" is the seed study's, 7 systems,
every pair on every vignette 8 times, 5 pairs per judge (about 400 judges at 12 vignettes); "small" is 4
systems, 4 times per cell. Planted abilities put two systems at the reference's level (true nulls) and the
others at 0.3-0.6 log-odds from it.

Printed per cell (Markdown): the coverage of each 95% interval of the systems against the reference
(Wald, the judge bootstrap, the judge x vignette robust and bootstrap intervals, the judge-robust one and the
headline), with the number of intervals counted, how often the headline was the two-way interval, and
the family-wise error (any true null rejected) of the headline's Holm decisions and of Holm on Wald p.
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
KINDS = ["wald", "bootstrap", "two_way_robust", "two_way_bootstrap", "judge_robust", "headline"]
ALPHA = 0.05


def setup_django() -> None:
    """The fitting code lives in a Django app: set it up on a throwaway SQLite file (nothing is written)."""
    os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='mj-coverage-')}/unused.sqlite3"
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()


def one_study(design: dict, *, answer_sd: float, vignettes: int, inattentive: float, bootstrap: int, rng):
    """Simulate one study and fit it as a refit does: the question's stored result."""
    from analysis.services.fitting import DEFAULT_PARAMETERS, fit_question
    from analysis.services.reading import QuestionData

    abilities = np.array(design["abilities"])
    sim = bt.simulate_judgments(
        abilities,
        vignettes=vignettes,
        repetitions=design["repetitions"],
        rng=rng,
        per_judge=5,
        answer_sd=answer_sd,
        inattentive=inattentive,
    )
    data = QuestionData("q", "", sim.winners, sim.losers, sim.first, sim.judges, sim.vignettes,
                        np.zeros(len(sim.winners)))  # fmt: skip
    systems = [{"key": f"s{k}", "label": f"s{k}", "kind": "llm"} for k in range(len(abilities))]
    parameters = DEFAULT_PARAMETERS | {"bootstrap": bootstrap, "split_halves": 0, "seed": int(rng.integers(1 << 30))}
    return fit_question(data, systems=systems, reference=0, parameters=parameters, position=0, vignette_keys={})


def bounds(result, kind: str):
    """(low, high) per system of one interval kind, or None when the study has none of that kind."""
    if kind == "wald":
        return [(i.ci_low, i.ci_high) for i in result.fit.items]
    if kind == "headline":
        h = result.headline
        return None if h is None else list(zip(h.ci_low, h.ci_high, strict=True))
    interval = result.intervals.get(kind)
    return None if interval is None else list(zip(interval.ci_low, interval.ci_high, strict=True))


def run_cell(design_name: str, *, answer_sd, vignettes, inattentive, replications, bootstrap, seed) -> dict:
    design = DESIGNS[design_name]
    truth = np.array(design["abilities"]) - design["abilities"][0]
    null = [k for k in range(1, len(truth)) if truth[k] == 0]
    rng = np.random.default_rng([seed, int(answer_sd * 100), vignettes, int(inattentive * 100)])
    covered = dict.fromkeys(KINDS, 0)
    counted = dict.fromkeys(KINDS, 0)
    two_way_leads = holm_errors = wald_holm_errors = 0
    for _ in range(replications):
        result = one_study(design, answer_sd=answer_sd, vignettes=vignettes, inattentive=inattentive,
                           bootstrap=bootstrap, rng=rng)  # fmt: skip
        for kind in KINDS:
            for k, pair in enumerate(bounds(result, kind) or []):
                if k == 0 or pair[0] is None or pair[1] is None:
                    continue
                counted[kind] += 1
                covered[kind] += pair[0] <= truth[k] <= pair[1]
        two_way_leads += bool(result.headline and result.headline.interval == "two_way_robust")
        holm_errors += any(result.holm_p[k] is not None and result.holm_p[k] < ALPHA for k in null)
        wald_holm = bt.holm(np.array([np.nan if i.p is None else i.p for i in result.fit.items]))
        wald_holm_errors += any(wald_holm[k] < ALPHA for k in null)
    return {
        "coverage": {k: (covered[k] / counted[k] if counted[k] else None, counted[k]) for k in KINDS},
        "two_way_leads": two_way_leads / replications,
        "fwer_holm": holm_errors / replications,
        "fwer_wald_holm": wald_holm_errors / replications,
    }


def table_header() -> str:
    heads = ["design", "answer SD", "vignettes", "inattentive", *KINDS, "two-way leads", "FWER Holm", "FWER Wald-Holm"]
    return "| " + " | ".join(heads) + " |\n|" + "---|" * len(heads)


def table_row(cell: tuple, out: dict) -> str:
    def share(value):
        return "–" if value is None else f"{value:.3f}"

    coverage = [f"{share(c)} ({n})" for c, n in out["coverage"].values()]
    said = [*map(str, cell), *coverage, share(out["two_way_leads"]), share(out["fwer_holm"]),
            share(out["fwer_wald_holm"])]  # fmt: skip
    return "| " + " | ".join(said) + " |"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replications", type=int, default=200, help="studies per cell (default 200)")
    parser.add_argument("--answer-sd", type=float, nargs="+", default=[0.0, 0.2, 0.4, 0.6])
    parser.add_argument("--vignettes", type=int, nargs="+", default=[3, 6, 12, 25])
    parser.add_argument("--inattentive", type=float, nargs="+", default=[0.0, 0.1])
    parser.add_argument("--design", nargs="+", choices=list(DESIGNS), default=list(DESIGNS))
    parser.add_argument("--bootstrap", type=int, default=0, help="bootstrap replicates (0: no bootstrap kinds)")
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args(argv)
    setup_django()
    print(f"{args.replications} replications per cell; coverage (intervals counted) of 95% intervals.\n")
    print(table_header(), flush=True)
    for cell in itertools.product(args.design, args.answer_sd, args.vignettes, args.inattentive):
        design, answer_sd, vignettes, inattentive = cell
        out = run_cell(design, answer_sd=answer_sd, vignettes=vignettes, inattentive=inattentive,
                       replications=args.replications, bootstrap=args.bootstrap, seed=args.seed)  # fmt: skip
        print(table_row(cell, out), flush=True)


if __name__ == "__main__":
    main()
