"""Joint coverage of the simultaneous band and the rank sets, against the single headline intervals.

Run (small: the machine is shared):

    nice python benchmarks/rank_coverage.py --replications 200 --answer-sd 0 0.4 0.6 --vignettes 3 6 12 \\
        [--missing 0 0.4] [--draws 100000]

The seed study's design (7 systems, every pair on every vignette 8 times, 5 pairs per judge; planted abilities
0, 0, 0, 0.3, 0.4, -0.3, 0.6 with the first the reference), answers whose quality departs from their system's
ability with SD `--answer-sd`, and with `--missing` that share of the system x vignette answers missing (every
comparison with a missing answer dropped). Each study is tested as the dashboard does (headline_test: CR2 over
vignettes, the judge design effect, Satterthwaite df), then ranks.rank_claims.

Scored against the estimand: the population Bradley–Terry abilities when answers vary (the fit over the cells of
new vignettes, computed once on 20,000 of them; equal planted abilities get equal values), so with SD 0 the
planted ones. Printed per cell (Markdown): the share of studies where all 6 single 95% intervals cover together,
where the band covers all 6, where every system's rank set holds its true rank (a tie: every rank of the tie),
the mean band critical value beside the single interval's t, the share of studies with a "best with 95%
confidence" claim and with a wrong one, and the studies without a test (no band shown). A share's Monte Carlo
SE is about sqrt(0.95 * 0.05 / R) (0.015 at R = 200).
"""

from __future__ import annotations

import argparse
import itertools
import sys
from functools import cache
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis import bradley_terry as bt  # noqa: E402  (pure numpy: no Django needed)
from analysis.bradley_terry.ranks import DRAWS, rank_claims  # noqa: E402

ABILITIES = np.array([0.0, 0.0, 0.0, 0.3, 0.4, -0.3, 0.6])
REPETITIONS = 8


@cache
def estimand(answer_sd: float) -> tuple[float, ...]:
    """The population abilities (reference 0) when answers vary with this SD: logistic BT on expected wins."""
    if answer_sd == 0:
        return tuple(ABILITIES - ABILITIES[0])
    rng = np.random.default_rng(2026)
    n, vignettes = len(ABILITIES), 20_000
    first, second = np.triu_indices(n, k=1)
    quality = ABILITIES + rng.normal(0.0, answer_sd, (vignettes, n))
    share = 1.0 / (1.0 + np.exp(-(quality[:, first] - quality[:, second]).ravel()))
    x = np.zeros((len(share), n))
    rows = np.arange(len(share))
    x[rows, np.tile(first, vignettes)] = 1.0
    x[rows, np.tile(second, vignettes)] = -1.0
    x = x[:, 1:]  # the reference's column out
    theta = np.zeros(n - 1)
    for _ in range(50):
        mu = 1.0 / (1.0 + np.exp(-(x @ theta)))
        step = np.linalg.solve((x * (mu * (1 - mu))[:, None]).T @ x, x.T @ (share - mu))
        theta += step
        if np.max(np.abs(step)) < 1e-12:
            break
    values = np.r_[0.0, theta]
    for planted in np.unique(ABILITIES):  # equal planted abilities: equal estimands (the draw's noise averaged out)
        same = planted == ABILITIES
        values[same] = 0.0 if same[0] else values[same].mean()
    return tuple(values)


def one_study(*, answer_sd: float, vignettes: int, missing: float, rng: np.random.Generator):
    data = bt.simulate_judgments(ABILITIES, vignettes=vignettes, repetitions=REPETITIONS, rng=rng, answer_sd=answer_sd)
    keep = np.ones(len(data.winners), bool)
    if missing > 0:
        absent = rng.random((vignettes, len(ABILITIES))) < missing
        keep = ~(absent[data.vignettes, data.winners] | absent[data.vignettes, data.losers])
    return bt.headline_test(
        data.winners[keep], data.losers[keep], len(ABILITIES), reference=0,
        judges=data.judges[keep], vignettes=data.vignettes[keep],
    )  # fmt: skip


def true_rank_range(truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each system's best and worst rank (1 = best) when ties may be ordered either way."""
    better = (truth[None, :] > truth[:, None]).sum(axis=1)
    worse = (truth[None, :] < truth[:, None]).sum(axis=1)
    return 1 + better, len(truth) - worse


def run_cell(*, answer_sd, vignettes, missing, replications, draws, seed) -> dict:
    truth = np.array(estimand(answer_sd))
    best_rank, worst_rank = true_rank_range(truth)
    rng = np.random.default_rng([seed, int(answer_sd * 100), vignettes, int(missing * 100)])
    tally = dict.fromkeys(("single", "band", "ranks", "claims", "wrong_claims", "untested"), 0)
    criticals, single_t, scored = [], [], 0
    for _ in range(replications):
        test = one_study(answer_sd=answer_sd, vignettes=vignettes, missing=missing, rng=rng)
        claims = rank_claims(test, rng=rng, draws=draws)
        every = np.ones(len(truth), bool)
        every[0] = False  # the reference: 0 by definition
        if not claims.tested or np.isnan(claims.band_low[every]).any():
            tally["untested"] += 1  # no band for every system: not scored (the page shows none)
            continue
        scored += 1
        tally["single"] += bool(np.all((test.ci_low <= truth) & (truth <= test.ci_high)))
        tally["band"] += bool(np.all((claims.band_low <= truth) & (truth <= claims.band_high)))
        tally["ranks"] += bool(np.all((claims.rank_low <= best_rank) & (worst_rank <= claims.rank_high)))
        best = claims.best()
        tally["claims"] += bool(best)
        tally["wrong_claims"] += bool(best) and worst_rank[int(best)] != 1
        criticals.append(claims.band_critical)
        single_t.append(float(stats.t.ppf(0.975, claims.band_df)))
    share = {key: (value / scored if scored else None) for key, value in tally.items() if key != "untested"}
    return share | {
        "untested": tally["untested"] / replications,
        "critical": float(np.mean(criticals)) if criticals else None,
        "single_t": float(np.mean(single_t)) if single_t else None,
        "scored": scored,
    }


COLUMNS = ["answer SD", "vignettes", "missing", "studies scored", "6 single intervals jointly", "band jointly",
           "rank sets jointly", "band critical (single t)", "'best' claimed", "wrong 'best'", "no test"]  # fmt: skip


def table_row(cell: tuple, out: dict) -> str:
    def share(value):
        return "–" if value is None else f"{value:.3f}"

    critical = "–" if out["critical"] is None else f"{out['critical']:.2f} ({out['single_t']:.2f})"
    said = [*map(str, cell), str(out["scored"]), share(out["single"]), share(out["band"]), share(out["ranks"]),
            critical, share(out["claims"]), share(out["wrong_claims"]), share(out["untested"])]  # fmt: skip
    return "| " + " | ".join(said) + " |"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replications", type=int, default=200, help="studies per cell (default 200)")
    parser.add_argument("--answer-sd", type=float, nargs="+", default=[0.0, 0.4, 0.6])
    parser.add_argument("--vignettes", type=int, nargs="+", default=[3, 6, 12])
    parser.add_argument("--missing", type=float, nargs="+", default=[0.0])
    parser.add_argument("--draws", type=int, default=DRAWS, help=f"multivariate t draws per study (default {DRAWS})")
    parser.add_argument("--seed", type=int, default=20261204)
    args = parser.parse_args(argv)
    print(f"{args.replications} replications per cell, {args.draws} draws; joint coverage of 95% statements.\n")
    print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS), flush=True)
    for cell in itertools.product(args.answer_sd, args.vignettes, args.missing):
        answer_sd, vignettes, missing = cell
        out = run_cell(answer_sd=answer_sd, vignettes=vignettes, missing=missing, replications=args.replications,
                       draws=args.draws, seed=args.seed)  # fmt: skip
        print(table_row(cell, out), flush=True)


if __name__ == "__main__":
    main()
