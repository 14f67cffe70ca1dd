"""Coverage of PPI++ intervals in the study's design, independent rows (ppi-python) against vignette-clustered.

Run standalone: `nice -n 10 python benchmarks/ppi_coverage.py [--reps 1000] [--seed 1] [--answer-sd 0.6]`.
The design (tests/llm_judging/study_design.py): 7 systems 0.4 log-odds apart, 12 vignettes, every pair on every
vignette judged by 8 humans, answers varying with SD 0.6 around their system's ability, an LLM judge on the
humans' cells (1x) and on ten times as many cells (10x). Printed per design and interval kind: coverage of the
population abilities (mean over the 6 systems and the worst system's), the mean width and lambda. With R
replications a coverage's Monte Carlo SE is about sqrt(0.95 * 0.05 / R) per system (0.007 at R = 1000).
docs/statistics-ppi.md holds the numbers of a full run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.llm_judging.study_design import StudyDesign, coverage  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--answer-sd", type=float, default=0.6)
    args = parser.parse_args()
    print(f"answer SD {args.answer_sd}, {args.reps} replications, seed {args.seed}")
    print(f"{'judge':>6} {'interval':<16} {'coverage':>8} {'worst':>6} {'width':>6} {'lambda':>6}")
    for multiple in (1, 10):
        design = StudyDesign(judge_multiple=multiple, answer_sd=args.answer_sd)
        for kind, row in coverage(design, reps=args.reps, seed=args.seed + multiple).items():
            print(
                f"{multiple:>5}x {kind:<16} {row['coverage']:>8.3f} {row['worst_system']:>6.3f} "
                f"{row['width']:>6.3f} {row['lambda']:>6.3f}"
            )


if __name__ == "__main__":
    main()
