"""Differences between vignette sets: coverage of their intervals, their power, and the fragility of claims.

Two modes (small runs: the machine is shared):

    nice python benchmarks/set_differences.py --replications 200 --answer-sd 0 0.3 0.6 --vignettes 6 12 \\
        --fragility-studies 20
    nice python benchmarks/set_differences.py --paper tests/fixtures/paper/reported_estimates.json \\
        --replications 200 --answer-sd 0 0.3 --fragility-studies 10

**Coverage** (default). Two sets of `--vignettes` vignettes each, five systems (the first the reference) with
abilities A = (0, 0.3, 0.2, -0.1, 0.4) on the first set and B = (0, 0.3, -0.3, -0.1, 0.0) on the second
(differences 0, -0.5, 0, -0.4), every pair on every vignette judged 8 times, 5 pairs per judge, distinct judges
per set; answers depart from their system's ability with SD `--answer-sd`. Each study is fitted as a refit does
(analysis/bradley_terry/sets.py: per-set fits, each difference with the headline test, Holm across systems) and
each difference's 95% interval is scored against the estimand: the population Bradley–Terry difference (each
set's fit over 4,000 new vignettes, once per cell), so with SD 0 the planted one. Printed per cell: coverage over
all 4 differences (Monte Carlo SE about 0.011 at 200 studies x 4, the 4 of a study not independent), the
family-wise error of Holm on the two null differences, the power for -0.5 and -0.4, and the studies without a test.

**Fragility** (both modes). For `--fragility-studies` studies per cell, every system significant against the
reference by the headline test gets its fragility (analysis/services/claim_fragility.py: judgments, judges,
vignettes; influence approximation, then refits); each reported set is then checked independently: the headline
test refitted without it must no longer be significant with the same sign (confirmed), and one unit fewer must
still be (smallest). Printed: claims, reported sets, the share confirmed, the share smallest, and the median counts.

**Paper** (`--paper FILE`): the source study's Experiment 1 (7 systems, 12 published vignettes) and Experiment 2
(8 systems, 12 novel vignettes) at the log-odds it reported (null: 0), each 8 judgments per pair and vignette, 5
per judge, judges distinct; fitted jointly with the experiment as the set over the 7 shared systems
(the philosophers are in Experiment 2 only), as `/dashboard/SLUG/compared-with/OTHER/` does. Per question and
system: the planted difference (Exp. 2 minus Exp. 1), the power of its test (p < 0.05, and Holm across the 6
systems), and with `--fragility-studies` the median fragility of each published claim (each experiment's
significant estimates) where it came out significant.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from functools import cache
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis import bradley_terry as bt  # noqa: E402  (pure numpy)
from analysis.bradley_terry.sets import by_set  # noqa: E402

A = np.array([0.0, 0.3, 0.2, -0.1, 0.4])
B = np.array([0.0, 0.3, -0.3, -0.1, 0.0])
REPETITIONS, PER_JUDGE = 8, 5
PAPER_SYSTEMS = {
    "exp1": ["lay-human", "gpt-4o", "o1", "deepseek-v3", "claude-3.7-sonnet", "llama-3.3", "gemini-1.5-flash"],
    "exp2": ["lay-human", "gpt-4o", "o1", "deepseek-v3", "claude-3.7-sonnet", "llama-3.3", "gemini-1.5-flash",
             "philosopher"],
}  # fmt: skip
QUESTIONS = ["features", "weighting", "reasons", "conclusion", "additional_info"]


def setup_django() -> None:
    """claim_fragility lives among the services: Django's settings, no database."""
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()


def two_sets(first: np.ndarray, second: np.ndarray, *, vignettes: int, answer_sd: float, rng) -> dict:
    """One study: each set simulated on its own vignettes and judges, joined (set 0 first); items renumbered onto
    `first`'s systems (the second may have more: their comparisons are left out)."""
    parts = []
    for s, abilities in enumerate((first, second)):
        made = bt.simulate_judgments(abilities, vignettes=vignettes, repetitions=REPETITIONS, rng=rng,
                                     per_judge=PER_JUDGE, answer_sd=answer_sd)  # fmt: skip
        keep = (made.winners < len(first)) & (made.losers < len(first))
        parts.append({"winners": made.winners[keep], "losers": made.losers[keep], "first": made.first[keep],
                      "judges": made.judges[keep] + s * 10**7, "vignettes": made.vignettes[keep] + s * 10**4,
                      "sets": np.full(int(keep.sum()), s)})  # fmt: skip
    return {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}


@cache
def population(abilities: tuple, answer_sd: float) -> np.ndarray:
    """The Bradley–Terry abilities a fit over many vignettes finds when answers vary (the planted ones at SD 0)."""
    if answer_sd == 0:
        return np.array(abilities)
    made = bt.simulate_judgments(np.array(abilities), vignettes=4000, repetitions=1, rng=np.random.default_rng(7),
                                 answer_sd=answer_sd)  # fmt: skip
    return np.asarray(bt.fit(made.winners, made.losers, len(abilities), reference=0).estimates)[: len(abilities)]


def fitted(study: dict, n_items: int, names: list[str]):
    return by_set(study["winners"], study["losers"], n_items, reference=0, sets=study["sets"],
                  judges=study["judges"], vignettes=study["vignettes"], item_names=names, set_order=["0", "1"])  # fmt: skip


def coverage_cell(*, answer_sd: float, vignettes: int, replications: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    truth = population(tuple(B), answer_sd) - population(tuple(A), answer_sd)
    names = [f"s{k}" for k in range(len(A))]
    covered, intervals, untested, fwer, power = 0, 0, 0, 0, {2: 0, 4: 0}
    for _ in range(replications):
        result = fitted(two_sets(A, B, vignettes=vignettes, answer_sd=answer_sd, rng=rng), len(A), names)
        rejected_nulls = False
        for d in result.differences:
            k = names.index(d.system)
            if d.ci_low is None or d.ci_high is None:
                untested += 1
                continue
            intervals += 1
            covered += d.ci_low <= truth[k] <= d.ci_high
            if k in power:
                power[k] += d.p_holm is not None and d.p_holm < 0.05
            elif d.p_holm is not None and d.p_holm < 0.05:
                rejected_nulls = True
        fwer += rejected_nulls
    return {"coverage": covered / max(intervals, 1), "intervals": intervals, "untested": untested,
            "fwer": fwer / replications, "power": {k: v / replications for k, v in power.items()},
            "truth": truth}  # fmt: skip


def fragility_cell(make_study, *, studies: int, names: list[str]) -> dict:
    """Fragility of every significant system in `studies` studies, each reported set checked by an independent refit."""
    from analysis.services.claim_fragility import fragile_claims, still_significant
    from analysis.services.judged import Judged

    claims, sets, confirmed, smallest = 0, 0, 0, 0
    counts: dict[str, list[float]] = {"judgment": [], "judge": [], "vignette": []}
    by_claim: dict[str, list[tuple[str, float]]] = {}
    for _ in range(studies):
        study = make_study()
        judged = Judged(study["winners"], study["losers"], study["first"], study["judges"], study["vignettes"],
                        np.zeros(len(study["winners"])), names, 0, {"order_effect": False})  # fmt: skip
        for name, estimate, _p, found in fragile_claims(judged):
            claims += 1
            k = names.index(name)
            sign = float(np.sign(estimate))
            for one in found:
                if one.count is None:
                    continue
                sets += 1
                labels = {"judgment": np.arange(len(judged.winners)), "judge": judged.clusters,
                          "vignette": judged.vignettes}[one.unit]  # fmt: skip
                codes = np.unique(labels, return_inverse=True)[1]
                confirmed += not still_significant(judged, ~np.isin(codes, one.removed), k=k, sign=sign)
                smallest += one.count == 1 or still_significant(judged, ~np.isin(codes, one.removed[:-1]), k=k,
                                                                sign=sign)  # fmt: skip
                counts[one.unit].append(100 * one.count / one.of)
                by_claim.setdefault(name, []).append((one.unit, one.count))
    return {"claims": claims, "sets": sets, "confirmed": confirmed / max(sets, 1), "smallest": smallest / max(sets, 1),
            "median_share": {u: statistics.median(v) if v else None for u, v in counts.items()},
            "by_claim": by_claim}  # fmt: skip


def run_coverage(args) -> None:
    print("| answer SD | vignettes per set | coverage of the 4 differences (intervals) | no test | FWER Holm (2 nulls) "
          "| power -0.5 | power -0.4 | seconds |")  # fmt: skip
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    names = [f"s{k}" for k in range(len(A))]
    fragility_rows = []
    for answer_sd in args.answer_sd:
        for vignettes in args.vignettes:
            started = time.perf_counter()
            cell = coverage_cell(answer_sd=answer_sd, vignettes=vignettes, replications=args.replications,
                                 seed=args.seed)  # fmt: skip
            print(f"| {answer_sd} | {vignettes} | {cell['coverage']:.3f} ({cell['intervals']}) | {cell['untested']} "
                  f"| {cell['fwer']:.3f} | {cell['power'][2]:.3f} | {cell['power'][4]:.3f} "
                  f"| {time.perf_counter() - started:.0f} |", flush=True)  # fmt: skip
            if args.fragility_studies:
                rng = np.random.default_rng(args.seed + 1)

                def one_set(rng=rng, answer_sd=answer_sd, vignettes=vignettes):
                    made = bt.simulate_judgments(A, vignettes=2 * vignettes, repetitions=REPETITIONS, rng=rng,
                                                 per_judge=PER_JUDGE, answer_sd=answer_sd)  # fmt: skip
                    return {"winners": made.winners, "losers": made.losers, "first": made.first,
                            "judges": made.judges, "vignettes": made.vignettes}  # fmt: skip

                fragility_rows.append((answer_sd, vignettes, fragility_cell(one_set, studies=args.fragility_studies,
                                                                            names=names)))  # fmt: skip
    if fragility_rows:
        print("\n| answer SD | vignettes | significant claims | reported sets | confirmed by refit | smallest (one fewer "
              "holds) | median % of judgments / judges / vignettes |")  # fmt: skip
        print("| ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for answer_sd, vignettes, cell in fragility_rows:
            shares = " / ".join("–" if v is None else f"{v:.1f}%" for v in cell["median_share"].values())
            print(f"| {answer_sd} | {2 * vignettes} | {cell['claims']} | {cell['sets']} | {cell['confirmed']:.3f} "
                  f"| {cell['smallest']:.3f} | {shares} |")  # fmt: skip


def run_paper(args) -> None:
    reported = json.loads(Path(args.paper).read_text())
    for answer_sd in args.answer_sd:
        print(f"\n### Answer SD {answer_sd}: Exp. 2 minus Exp. 1, {args.replications} simulated pairs of studies\n")
        print("| question | system | Exp. 1 | Exp. 2 | difference | power (p < .05) | power (Holm) | coverage |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for question in QUESTIONS:
            planted = {}
            for exp in ("exp1", "exp2"):
                values = reported[exp].get(question, {})
                planted[exp] = np.array([v if isinstance(v := values.get(s), int | float) else 0.0
                                         for s in PAPER_SYSTEMS[exp]])  # fmt: skip
            shared = len(PAPER_SYSTEMS["exp1"])
            truth = population(tuple(planted["exp2"]), answer_sd)[:shared] - population(
                tuple(planted["exp1"]), answer_sd
            )
            rng = np.random.default_rng(args.seed)
            hits, holm_hits, covered, tested = (np.zeros(shared) for _ in range(4))
            for _ in range(args.replications):
                study = two_sets(planted["exp1"], planted["exp2"], vignettes=12, answer_sd=answer_sd, rng=rng)
                for d in fitted(study, shared, PAPER_SYSTEMS["exp1"]).differences:
                    k = PAPER_SYSTEMS["exp1"].index(d.system)
                    if d.p is None or d.ci_low is None or d.ci_high is None:
                        continue
                    tested[k] += 1
                    hits[k] += d.p < 0.05
                    holm_hits[k] += d.p_holm is not None and d.p_holm < 0.05
                    covered[k] += d.ci_low <= truth[k] <= d.ci_high
            for k, system in enumerate(PAPER_SYSTEMS["exp1"][1:], start=1):
                print(f"| {question} | {system} | {planted['exp1'][k]:+.2f} | {planted['exp2'][k]:+.2f} "
                      f"| {planted['exp2'][k] - planted['exp1'][k]:+.2f} | {hits[k] / args.replications:.3f} "
                      f"| {holm_hits[k] / args.replications:.3f} | {covered[k] / max(tested[k], 1):.3f} |", flush=True)  # fmt: skip
        if args.fragility_studies:
            print(f"\n### Answer SD {answer_sd}: how fragile each published claim is where it came out significant "
                  f"({args.fragility_studies} simulated studies per experiment)\n")  # fmt: skip
            print("| experiment | question | system | reported | significant in | median judgments / judges / "
                  "vignettes to drop |")  # fmt: skip
            print("| --- | --- | --- | ---: | ---: | --- |")
            for exp in ("exp1", "exp2"):
                names = PAPER_SYSTEMS[exp]
                for question in QUESTIONS:
                    values = reported[exp].get(question, {})
                    abilities = np.array([v if isinstance(v := values.get(s), int | float) else 0.0 for s in names])
                    rng = np.random.default_rng(args.seed + 2)

                    def one(rng=rng, abilities=abilities, answer_sd=answer_sd):
                        made = bt.simulate_judgments(abilities, vignettes=12, repetitions=REPETITIONS, rng=rng,
                                                     per_judge=PER_JUDGE, answer_sd=answer_sd)  # fmt: skip
                        return {"winners": made.winners, "losers": made.losers, "first": made.first,
                                "judges": made.judges, "vignettes": made.vignettes}  # fmt: skip

                    cell = fragility_cell(one, studies=args.fragility_studies, names=names)
                    for system, value in values.items():
                        if not isinstance(value, int | float):
                            continue
                        found = cell["by_claim"].get(system, [])
                        per_unit = [statistics.median([c for u, c in found if u == unit]) if any(u == unit for u, _ in found)
                                    else None for unit in ("judgment", "judge", "vignette")]  # fmt: skip
                        times = sum(1 for u, _ in found if u == "judgment")
                        said = " / ".join("–" if v is None else f"{v:g}" for v in per_unit)
                        print(f"| {exp} | {question} | {system} | {value:+.2f} | {times} of {args.fragility_studies} "
                              f"| {said} |", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--answer-sd", type=float, nargs="+", default=[0.0, 0.3, 0.6])
    parser.add_argument("--vignettes", type=int, nargs="+", default=[6, 12], help="per set")
    parser.add_argument("--fragility-studies", type=int, default=0, help="studies per cell whose fragility is checked")
    parser.add_argument("--paper", help="the source study's reported estimates (JSON): Experiment 1 vs 2")
    parser.add_argument("--seed", type=int, default=20261204)
    args = parser.parse_args()
    if args.fragility_studies:
        setup_django()
    run_paper(args) if args.paper else run_coverage(args)


if __name__ == "__main__":
    main()
