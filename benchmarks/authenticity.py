"""How well the authenticity rating and the judge-quality flags find what they are meant to find.

Run standalone: `python benchmarks/authenticity.py [--writers 20] [--repetitions 10]` (a temporary SQLite
database; gunicorn serves the real pages; Debian's Chromium at /usr/bin/chromium types and pastes).

1. Writers (tests/e2e/writers.py) each write one answer on the real answer-writing page: `--writers`
   pasters (every field pasted whole with Chromium's own Control+V) and typists who paste one short
   phrase, and `--typists` people who type, spread over the ways people type (key by key with corrected
   typos, a phone keyboard's swipe, dictation, IME composition, autocorrect; Chromium's own input paths).
   Printed: the ratings per kind, the detection rate (pasters rated low; goal >= 95%) and the false-flag
   rate (typists rated low; goal <= 1%) with its one-sided 95% upper bound (Clopper-Pearson).
2. Judges: the demo study with `--repetitions` judgments per cell, filled by `simulate_judges` with 10% and
   30% inattentive judges (random picks; abilities gpt-4o 1.0, claude 0.5, philosopher -0.5 against lay
   humans, times --ability-scale); printed, per share: how many inattentive judges the flags catch
   and how many careful judges they flag (analysis/services/judge_quality.py).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.harness import free_port, server_env, setup_django, start_gunicorn  # noqa: E402

PASTING_KINDS = ("paster", "phrase")
ABILITIES = {"gpt-4o": 1.0, "claude": 0.5, "philosopher": -0.5}  # moderate differences, as in the demo's story


def writer_kinds(writers: int, typists: int) -> list[str]:
    """The kind of each writer, interleaved: `writers` of each pasting kind, `typists` over the typing kinds."""
    from tests.e2e.writers import TYPIST_KINDS

    typing = [TYPIST_KINDS[n % len(TYPIST_KINDS)] for n in range(typists)]
    pasting = [kind for _ in range(writers) for kind in PASTING_KINDS]
    kinds = []
    while typing or pasting:
        kinds += [typing.pop(0)] if typing else []
        kinds += [pasting.pop(0)] if pasting else []
    return kinds


def write_answers(base: str, study, kinds: list[str], seed: int) -> dict[str, list[str]]:
    """Each writer writes one answer through Chromium; returns {kind: [PROLIFIC_PID, …]}."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.browser import CHROMIUM_ARGS
    from tests.e2e.writers import write_as

    rng = random.Random(seed)
    pids: dict[str, list[str]] = {kind: [] for kind in dict.fromkeys(kinds)}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        for n, kind in enumerate(kinds):
            pid = f"{n:024x}"
            write_as(browser, base=base, slug=study.slug, pid=pid, study_id="b" * 24, kind=kind, rng=rng)
            pids[kind].append(pid)
        browser.close()
    return pids


def upper_bound(failures: int, n: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound of a rate seen `failures` times in `n`."""
    from scipy.stats import beta

    return 1.0 if failures >= n else float(beta.ppf(confidence, failures + 1, n - failures))


def report_writers(pids: dict[str, list[str]]) -> None:
    from surveys.models import RespondentTask
    from tests.e2e.writers import TYPIST_KINDS

    print(f"\n{'writer':<12} {'n':>4} {'high':>6} {'mixed':>6} {'low':>6} {'unknown':>8}")
    ratings = {}
    for kind, group in pids.items():
        tasks = RespondentTask.objects.filter(respondent__prolific_pid__in=group, answer__isnull=False)
        ratings[kind] = Counter(tasks.values_list("answer__authenticity", flat=True))
        r = ratings[kind]
        print(f"{kind:<12} {len(group):>4} {r['high']:>6} {r['mixed']:>6} {r['low']:>6} {r['unknown']:>8}")
    if pids.get("paster"):
        print(f"detection: pasters rated low {ratings['paster']['low'] / len(pids['paster']):.1%} (goal >= 95%)")
    if pids.get("phrase"):
        print(f"one pasted phrase in a typed answer rated low {ratings['phrase']['low'] / len(pids['phrase']):.1%}")
    typists = sum(len(pids.get(kind, [])) for kind in TYPIST_KINDS)
    if typists:
        low = sum(ratings[kind]["low"] for kind in TYPIST_KINDS if kind in ratings)
        print(
            f"false flags: {low} of {typists} typists rated low ({low / typists:.2%}; one-sided 95% upper bound "
            f"{upper_bound(low, typists):.2%}; goal <= 1%)"
        )


def judge_flags(repetitions: int, seed: int, scale: float) -> None:
    from analysis.services.judge_quality import judge_measures, quality_summary
    from analysis.services.simulated_judges import simulate_judges
    from surveys.services.study_files import import_study

    data = json.loads((ROOT / "surveys" / "demo" / "demo.study.json").read_text(encoding="utf-8"))
    data["design"]["repetitions"] = repetitions
    print(
        f"\n{'inattentive':>11} {'judges':>7} {'careless':>9} {'caught':>7} {'careful flagged':>16} {'largest change':>15}"
    )
    for share in (0.1, 0.3):
        study = import_study(dict(data, slug=f"judges-{int(share * 100)}"))
        careless: list[int] = []
        judges = repetitions * 6 * 4 // 3  # cells x judgments per cell / pages per judge
        simulate_judges(
            study=study,
            judges=judges,
            abilities={key: value * scale for key, value in ABILITIES.items()},
            seed=seed,
            inattentive=share,
            inattentive_ids=careless,
        )
        measures = judge_measures(study=study)
        measured = {j.participant_id for j in measures}
        flagged = {j.participant_id for j in measures if j.reasons}
        careless_set = measured & set(careless)
        careful = measured - careless_set
        caught = len(flagged & careless_set) / max(1, len(careless_set))
        false = len(flagged & careful) / max(1, len(careful))
        rows = quality_summary(study=study)["rows"]
        change = max((r.largest_change or 0) for r in rows) if rows else 0.0
        print(f"{share:>11.0%} {len(measured):>7} {len(careless_set):>9} {caught:>7.1%} {false:>16.1%} {change:>15.3f}")
        why = Counter(
            r.split(" (")[0].split(" on ")[0] for j in measures if j.participant_id in careful for r in j.reasons
        )
        print(f"{'':>11} careful judges' flags: {dict(why) or 'none'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=20, help="answers per pasting kind of writer")
    parser.add_argument("--typists", type=int, default=20, help="answers by people typing, over the ways of typing")
    parser.add_argument("--repetitions", type=int, default=10, help="judgments per cell in the judge part")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--ability-scale", type=float, default=1.0, help="multiplies the systems' abilities")
    parser.add_argument("--skip-writers", action="store_true", help="only the judge part (no browser)")
    parser.add_argument("--skip-judges", action="store_true", help="only the writers part")
    args = parser.parse_args()

    directory = Path(tempfile.mkdtemp(prefix="mj-authenticity-"))
    env = server_env(f"sqlite:///{directory}/bench.sqlite3")
    setup_django(env)
    started = time.monotonic()
    if not args.skip_writers:
        from tests.surveys.test_respondents import answering_study

        study = answering_study(vignettes=4, m=1)
        port = free_port()
        with open(directory / "gunicorn.log", "w") as log:
            server = start_gunicorn(env, workers=1, port=port, log=log)
            try:
                kinds = writer_kinds(args.writers, args.typists)
                pids = write_answers(f"http://127.0.0.1:{port}", study, kinds, args.seed)
            finally:
                server.terminate()
                server.wait(timeout=30)
        report_writers(pids)
    if not args.skip_judges:
        judge_flags(args.repetitions, args.seed, args.ability_scale)
    print(f"\n(took {time.monotonic() - started:.0f} s; database {directory})")


if __name__ == "__main__":
    main()
