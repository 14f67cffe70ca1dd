"""Bradley-Terry fitting speed and agreement: analysis.bradley_terry against choix and statsmodels.

Run standalone: `python benchmarks/bt_fit.py` (needs requirements-bench.txt); `--only a` or
`--only b` runs one part (default: both).

(a) The method's size: 2,688 comparisons among 8 systems (28 pairs x 12 vignettes x 8
    judges, 5 cells per judge), for each of 5 questions one fit plus 1,000 judge-clustered
    bootstrap refits with percentile intervals.
(b) 1,000,000 comparisons among 100 items, one fit.

Every method gets the same data and the same bootstrap draws; each peer gets its natural
input (choix a win-count matrix, statsmodels one row per comparison) and the time to build
it is counted. Estimates are compared after putting every method on the same reference item.
choix's candidates are timed on one fit first and its fastest is used for the workload.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import choix
import statsmodels.api as sm

from analysis import bradley_terry as bt

SEED = 20250601
N_BOOT = 1000
LEVEL = 0.95


# ---------------------------------------------------------------- data


def study_data(rng):
    """Five questions' outcomes on one allocation of 2,688 cells to 538 judges."""
    systems, vignettes, repetitions, per_judge = 8, 12, 8, 5
    first, second = np.triu_indices(systems, k=1)
    first = np.repeat(first, vignettes * repetitions)
    second = np.repeat(second, vignettes * repetitions)
    order = rng.permutation(len(first))
    first, second = first[order], second[order]
    judges = np.arange(len(first)) // per_judge
    questions = []
    for _ in range(5):
        abilities = rng.normal(0, 0.3, systems)
        questions.append(bt.simulate(abilities, first, second, rng))
    return questions, judges, systems


def large_data(rng, n_items=100, n=1_000_000):
    abilities = rng.normal(0, 1, n_items)
    first = rng.integers(0, n_items, n)
    second = (first + rng.integers(1, n_items, n)) % n_items
    winners, losers = bt.simulate(abilities, first, second, rng)
    return winners, losers, n_items


# ---------------------------------------------------------------- peers


def win_matrix(winners, losers, n_items):
    return np.bincount(winners * n_items + losers, minlength=n_items * n_items).reshape(n_items, n_items).astype(float)


def choix_dense(winners, losers, n_items, reference):
    params = choix.ilsr_pairwise_dense(win_matrix(winners, losers, n_items), tol=1e-13, max_iter=100_000)
    return params - params[reference]


def choix_ilsr(winners, losers, n_items, reference):
    data = list(zip(winners.tolist(), losers.tolist(), strict=True))
    params = choix.ilsr_pairwise(n_items, data, tol=1e-13, max_iter=100_000)
    return params - params[reference]


def choix_opt(winners, losers, n_items, reference):
    data = list(zip(winners.tolist(), losers.tolist(), strict=True))
    params = choix.opt_pairwise(n_items, data, alpha=0.0, tol=1e-12)
    return params - params[reference]


def logit_design(winners, losers, n_items, reference):
    """One row per comparison, randomly oriented so that y is not constant."""
    flip = (np.arange(len(winners)) % 2).astype(bool)
    left, right = np.where(flip, losers, winners), np.where(flip, winners, losers)
    x = np.zeros((len(winners), n_items))
    rows = np.arange(len(winners))
    x[rows, left] += 1.0
    x[rows, right] -= 1.0
    return np.delete(x, reference, axis=1), (~flip).astype(float)


def statsmodels_logit(winners, losers, n_items, reference):
    x, y = logit_design(winners, losers, n_items, reference)
    params = sm.Logit(y, x).fit(method="newton", tol=1e-12, maxiter=100, disp=0).params
    return np.insert(params, reference, 0.0)


def ours(winners, losers, n_items, reference):
    return bt.fit(winners, losers, n_items, reference=reference).estimates


# ---------------------------------------------------------------- workload (a)


def resampled_indices(judges, draws):
    """Comparison indices of each bootstrap replicate (drawn judges, with repeats)."""
    by_judge = np.split(np.argsort(judges, kind="stable"), np.cumsum(np.bincount(judges))[:-1])
    return [np.concatenate([by_judge[j] for j in row]) for row in draws]


def percentile_ci(estimates):
    tail = 100 * (1 - LEVEL) / 2
    return np.percentile(estimates, tail, axis=0), np.percentile(estimates, 100 - tail, axis=0)


def peer_workload(method, questions, judges, n_items, draws):
    """Full fit and N_BOOT refits per question with a per-replicate fitting function."""
    fits, intervals = [], []
    replicates = resampled_indices(judges, draws)
    for winners, losers in questions:
        fits.append(method(winners, losers, n_items, 0))
        boot = np.array([method(winners[idx], losers[idx], n_items, 0) for idx in replicates])
        intervals.append(percentile_ci(boot))
    return fits, intervals


def choix_workload(questions, judges, n_items, draws):
    """choix on win matrices; replicate matrices are built vectorised from per-judge matrices."""
    n_judges = judges.max() + 1
    counts = np.zeros((len(draws), n_judges))
    np.add.at(counts, (np.arange(len(draws))[:, None], draws), 1.0)
    fits, intervals = [], []
    for winners, losers in questions:
        per_judge = np.zeros((n_judges, n_items * n_items))
        np.add.at(per_judge, (judges, winners * n_items + losers), 1.0)
        fits.append(choix_dense(winners, losers, n_items, 0))
        matrices = (counts @ per_judge).reshape(len(draws), n_items, n_items)
        boot = []
        for matrix in matrices:
            params = choix.ilsr_pairwise_dense(matrix, tol=1e-13, max_iter=100_000)
            boot.append(params - params[0])
        intervals.append(percentile_ci(np.array(boot)))
    return fits, intervals


def our_workload(questions, judges, n_items, seed):
    fits, intervals = [], []
    for winners, losers in questions:
        fits.append(bt.fit(winners, losers, n_items, reference=0).estimates)
        boot = bt.bootstrap(
            winners, losers, n_items, reference=0, clusters=judges, n_boot=N_BOOT, rng=np.random.default_rng(seed)
        )
        intervals.append((boot.ci_low, boot.ci_high))
    return fits, intervals


def timed(function, *args, repeat=1):
    best, value = np.inf, None
    for _ in range(repeat):
        started = time.perf_counter()
        value = function(*args)
        best = min(best, time.perf_counter() - started)
    return best, value


def largest_difference(ours_out, peer_out) -> float:
    ours_fits, ours_ci = ours_out
    peer_fits, peer_ci = peer_out
    gaps = [np.max(np.abs(a - b)) for a, b in zip(ours_fits, peer_fits, strict=True)]
    for (low_a, high_a), (low_b, high_b) in zip(ours_ci, peer_ci, strict=True):
        gaps += [np.max(np.abs(low_a - low_b)), np.max(np.abs(high_a - high_b))]
    return float(max(gaps))


def fastest_choix(winners, losers, n_items):
    candidates = {"ilsr_pairwise_dense": choix_dense, "ilsr_pairwise": choix_ilsr, "opt_pairwise": choix_opt}
    times = {name: timed(method, winners, losers, n_items, 0, repeat=5)[0] for name, method in candidates.items()}
    name = min(times, key=times.get)
    return name, candidates[name], times


def report(title, rows):
    fastest_peer = min(seconds for _, seconds, _ in rows[1:])  # rows[0] is ours
    print(title)
    print(f"  {'method':<38} {'seconds':>9} {'ratio to fastest peer':>22} {'max |diff| vs ours':>19}")
    for name, seconds, difference in rows:
        diff = "-" if difference is None else f"{difference:.2e}"
        print(f"  {name:<38} {seconds:>9.3f} {seconds / fastest_peer:>22.3f} {diff:>19}")


def workload_a():
    rng = np.random.default_rng(SEED)
    questions, judges, n_items = study_data(rng)
    draws = np.random.default_rng(SEED).integers(0, judges.max() + 1, size=(N_BOOT, judges.max() + 1))
    name, _, single = fastest_choix(*questions[0], n_items)
    print(f"choix single fit (2,688 comparisons): {', '.join(f'{k} {v * 1e3:.2f} ms' for k, v in single.items())}")
    print(
        f"  fastest: {name}" + ("" if name == "ilsr_pairwise_dense" else " (workload still uses the dense matrix form)")
    )
    our_time, our_out = timed(our_workload, questions, judges, n_items, SEED)
    choix_time, choix_out = timed(choix_workload, questions, judges, n_items, draws)
    sm_time, sm_out = timed(peer_workload, statsmodels_logit, questions, judges, n_items, draws)
    report(
        f"(a) 5 questions x (1 fit + {N_BOOT} clustered bootstrap refits), 2,688 comparisons, 8 systems",
        [
            ("ours (fit + bootstrap)", our_time, None),
            ("choix ilsr_pairwise_dense", choix_time, largest_difference(our_out, choix_out)),
            ("statsmodels Logit (newton)", sm_time, largest_difference(our_out, sm_out)),
        ],
    )


def workload_b():
    rng = np.random.default_rng(SEED + 1)
    winners, losers, n_items = large_data(rng)
    our_time, our_est = timed(ours, winners, losers, n_items, 0, repeat=3)
    dense_time, dense_est = timed(choix_dense, winners, losers, n_items, 0, repeat=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sm_time, sm_est = timed(statsmodels_logit, winners, losers, n_items, 0)
    report(
        "(b) 1,000,000 comparisons among 100 items, one fit (best of 3; statsmodels once)",
        [
            ("ours", our_time, None),
            ("choix ilsr_pairwise_dense (+ matrix)", dense_time, float(np.max(np.abs(our_est - dense_est)))),
            ("statsmodels Logit (newton)", sm_time, float(np.max(np.abs(our_est - sm_est)))),
        ],
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("a", "b"), help="run one part only (default: both)")
    only = parser.parse_args().only
    print(f"numpy {np.__version__}, choix {metadata.version('choix')}, statsmodels {sm.__version__}")
    if only in (None, "a"):
        workload_a()
    if only in (None, "b"):
        workload_b()
