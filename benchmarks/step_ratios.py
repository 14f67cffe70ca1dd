"""Each step of the judging survey at a given concurrency, as a ratio to /healthz measured in the same round.

Used by survey_load.py: a round measures the /healthz p95 at the concurrency, then sends judges
through the whole survey at that concurrency and divides each step's p95 by it; rounds are repeated,
and the median with the lowest and highest round is printed, so the spread of a shared machine shows.
At the highest concurrency, judges completed per second is the survey's throughput at saturation.
"""

from __future__ import annotations

import statistics
import time

from harness import Recorder, judge, new_client, p95, run_pool

STEP_KINDS = [
    "entry",
    "consent GET",
    "consent POST",
    "demographics GET",
    "demographics POST",
    "judging page GET",
    "judging page POST",
    "attention GET",
    "attention POST",
    "done",
]


def healthz_round(base: str, *, concurrency: int, requests: int) -> tuple[float, float]:
    """(p95 seconds, requests per second) of /healthz at this concurrency, each thread on one client."""
    rec = Recorder()
    per_client = max(1, requests // concurrency)

    def health(_):
        with new_client(base) as client:
            for _ in range(per_client):
                rec.request(client, "healthz", "GET", "/healthz", (200,))

    started = time.perf_counter()
    run_pool(concurrency, range(concurrency), health)
    samples = rec.samples["healthz"]
    return p95(samples), len(samples) / (time.perf_counter() - started)


def step_round(base: str, *, slug: str, questions: list[str], concurrency: int, judges: range) -> dict:
    """One round: the /healthz p95, then `judges` through the survey; each step's p95 as a ratio to it."""
    healthz_p95, healthz_rps = healthz_round(base, concurrency=concurrency, requests=20 * len(judges))
    rec = Recorder()
    outcomes, errors, wall = run_pool(concurrency, judges, lambda n: judge(rec, base, slug, n, questions))
    ratios = {kind: p95(rec.samples[kind]) / healthz_p95 for kind in STEP_KINDS if rec.samples[kind]}
    return {
        "ratios": ratios,
        "judges_per_second": outcomes.count("completed") / wall,
        "healthz_p95_ms": healthz_p95 * 1000,
        "healthz_rps": healthz_rps,
        "errors": errors,
    }


def measure(
    base: str, *, slug: str, questions: list[str], concurrencies: list[int], rounds: int, judges: int
) -> tuple[list[str], list[str]]:
    """Rounds at each concurrency, interleaved so a change in the machine's load touches them alike."""
    results: dict[int, list[dict]] = {c: [] for c in concurrencies}
    number = 2 * 10**6  # PROLIFIC_PIDs of their own
    for _ in range(rounds):
        for concurrency in concurrencies:
            count = max(judges, concurrency)
            results[concurrency].append(
                step_round(
                    base, slug=slug, questions=questions, concurrency=concurrency, judges=range(number, number + count)
                )
            )
            number += count
    return report(results)


def _spread(values: list[float], unit: str = "x") -> str:
    return f"{statistics.median(values):6.1f}{unit} ({min(values):.1f}-{max(values):.1f})"


def report(results: dict[int, list[dict]]) -> tuple[list[str], list[str]]:
    """The lines to print, and the errors of every round."""
    lines, errors = [], []
    for concurrency, rounds in results.items():
        judges_per_second = [r["judges_per_second"] for r in rounds]
        healthz = [r["healthz_p95_ms"] for r in rounds]
        lines.append(
            f"concurrency {concurrency}, {len(rounds)} rounds: judges completed/s {_spread(judges_per_second, '')}, "
            f"/healthz p95 {_spread(healthz, ' ms')}; per step p95 / /healthz p95, median (lowest-highest round):"
        )
        for kind in STEP_KINDS:
            values = [r["ratios"][kind] for r in rounds if kind in r["ratios"]]
            if values:
                lines.append(f"  {kind:<18} {_spread(values)}")
        errors += [error for r in rounds for error in r["errors"]]
    return lines, errors
