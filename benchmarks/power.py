"""Predicted power against refits: does the power page's figure come true when studies are refitted?

Run (small: the machine is shared):

    nice python benchmarks/power.py --refits 300 --simulations 2000 [--design small|seed] [--answer-sd 0 0.4]

Per design and answer-level SD: the power the page and `manage.py power` predict (analysis/power/
reported_test.py: the dashboard's test run on `--simulations` simulated studies, seed 1), and the share of true
effects found in `--refits` other simulated studies refitted as a refit fits a question
(analysis.services.fitting.fit_question: the stored Holm p of its headline, at alpha / questions). They agree
when the simulated test is the one the dashboard reports: the table prints the difference, its Monte Carlo SE
and whether it is within ±0.03 (the target), and how often the two tests decided alike on the same studies
(the refits' own studies run through reported_p too). Refits store the headline test's Holm p, the test the
simulation runs, so they must decide alike on every study: a study where they do not is printed and `compare`
reports it (`alike` below 1.000 means the dashboard and the power page test different things).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis import bradley_terry as bt  # noqa: E402
from analysis.power.reported_test import Design, reported_p, reported_test_power  # noqa: E402

DESIGNS = {
    # 4 systems, 6 vignettes, 6 judgments per cell: power near one half, where the check is sharpest
    "small": dict(systems=4, gap=1.0, vignettes=6, repetitions=6, pairs_per_judge=3, questions=1),
    "seed": dict(systems=7, gap=0.4, vignettes=12, repetitions=8, pairs_per_judge=5, questions=5),
}
TOLERANCE = 0.03


def setup_django() -> None:
    """fit_question lives in a Django app: set it up on a throwaway SQLite file (nothing is written)."""
    os.environ["DATABASE_URL"] = f"sqlite:///{tempfile.mkdtemp(prefix='mj-power-')}/unused.sqlite3"
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()


def refit_holm_p(study: bt.SimulatedJudgments, n_items: int) -> np.ndarray:
    """The Holm p a refit stores for this study's question (the dashboard's figures)."""
    from analysis.services.fitting import DEFAULT_PARAMETERS, fit_question
    from analysis.services.reading import QuestionData

    data = QuestionData("q", "", study.winners, study.losers, study.first, study.judges, study.vignettes,
                        np.zeros(len(study.winners)))  # fmt: skip
    systems = [{"key": f"s{k}", "label": f"s{k}", "kind": "llm"} for k in range(n_items)]
    # Only the Holm p is read: no bootstrap, split halves or fragility (the refits it makes would not change it).
    parameters = DEFAULT_PARAMETERS | {"bootstrap": 0, "split_halves": 0, "fragility": False}
    result = fit_question(data, systems=systems, reference=0, parameters=parameters, position=0, vignette_keys={})
    return np.array([np.nan if p is None else p for p in result.holm_p], float)


def compare(design: Design, *, refits: int, simulations: int, seed: int = 1) -> dict:
    predicted = reported_test_power(design, simulations=simulations, seed=seed)
    rng = np.random.default_rng([seed, 99])  # other studies than the prediction's
    truth = np.asarray(design.abilities)
    real = truth[1:] != 0
    alpha = design.alpha / design.questions
    shares, alike = [], 0
    for _ in range(refits):
        study = bt.simulate_judgments(
            truth, vignettes=design.vignettes, repetitions=design.repetitions, rng=rng,
            per_judge=design.pairs_per_judge, answer_sd=design.answer_sd, order_effect=design.order_effect,
        )  # fmt: skip
        stored = refit_holm_p(study, len(truth))[1:]
        refit_rejects = np.nan_to_num(stored, nan=1.0) <= alpha
        simulated = reported_p(study, len(truth)).holm_p
        simulated_rejects = np.zeros(len(truth) - 1, bool) if simulated is None else simulated[1:] <= alpha
        same = bool((refit_rejects == simulated_rejects).all())
        alike += int(same)
        if not same:
            print(f"refit and simulated test differ: refit Holm p {stored}, simulated {simulated}", file=sys.stderr)
        shares.append(refit_rejects[real].mean())
    refitted = float(np.mean(shares))
    se = math.hypot(predicted.mc_se, float(np.std(shares, ddof=1)) / math.sqrt(refits))
    return {
        "predicted": predicted.power,
        "refitted": refitted,
        "difference": refitted - predicted.power,
        "se": se,
        "within": abs(refitted - predicted.power) <= TOLERANCE,
        "alike": alike / refits,
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--design", choices=DESIGNS, nargs="+", default=["small"])
    parser.add_argument("--answer-sd", type=float, nargs="+", default=[0.0, 0.4])
    parser.add_argument("--refits", type=int, default=300)
    parser.add_argument("--simulations", type=int, default=2000)
    args = parser.parse_args(argv)
    setup_django()
    print("| design | tau | predicted | refitted | difference (MC SE) | within ±0.03 | same decisions |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in args.design:
        for tau in args.answer_sd:
            row = compare(Design.of(**DESIGNS[name], answer_sd=tau), refits=args.refits, simulations=args.simulations)
            print(
                f"| {name} | {tau} | {row['predicted']:.3f} | {row['refitted']:.3f} | {row['difference']:+.3f} "
                f"({row['se']:.3f}) | {'yes' if row['within'] else 'NO'} | {row['alike']:.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
