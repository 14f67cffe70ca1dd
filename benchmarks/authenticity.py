"""How well the authenticity rating and the judge-quality flags find what they are meant to find.

Run standalone: `python benchmarks/authenticity.py [--honest 315] [--cheats 20] [--repetitions 10]` (a
temporary SQLite database; gunicorn serves the real pages; Debian's Chromium at /usr/bin/chromium types,
pastes, drops and inserts).

1. Writers (tests/e2e/writers.py) each write one answer on the real answer-writing page of a study whose
   four scenarios and LLM answers (gpt-4o, claude) are the demo study's. `--honest` people spread over the
   honest kinds (key by key with a person's timing, typos and pauses; brief answers; quoting the scenario;
   a phone keyboard's word insertion; autocorrect; dictation; IME; moving their own text; one pasted phrase)
   and `--cheats` writers of each cheating kind, copying one of the study's LLM answers for their scenario
   (whole pastes, drops, one-shot inserts, a script filling the fields, an auto-typer at constant speed,
   pasting the reasons only, retyping with a person's timing). The page's clock follows each writer's
   planned timing (writers.py), so minutes of typing take a second or two.
   Printed: the ratings per kind; the goals (honest low <= 1% with its one-sided 95% upper bound under 2%,
   honest brief and quoting writers high >= 80%, pastes, drops, one-shot inserts and constant-speed typing
   low >= 95%); the time signals' spread per kind (characters per focused second, the key intervals'
   coefficient of variation), which the thresholds are argued from; and how often the content check (the
   closest LLM answer at cosine >= 0.8) finds the retyped answers, when the chatbot's answer is one the
   study collected and when it came from the other chatbot.
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

ABILITIES = {"gpt-4o": 1.0, "claude": 0.5, "philosopher": -0.5}  # moderate differences, as in the demo's story
MUST_BE_LOW = ("paster", "dropper", "one-shot", "filled-in", "constant")
BRIEF_KINDS = ("brief", "quoter")
DEMO = ROOT / "surveys" / "demo" / "demo.study.json"


def writer_kinds(honest: int, cheats: int, rng: random.Random) -> list[str]:
    """The kind of each writer, shuffled: `honest` over the honest kinds, `cheats` of each cheating kind."""
    from tests.e2e.writers import CHEAT_KINDS, HONEST_KINDS

    kinds = [HONEST_KINDS[n % len(HONEST_KINDS)] for n in range(honest)]
    kinds += [kind for kind in CHEAT_KINDS for _ in range(cheats)]
    rng.shuffle(kinds)
    return kinds


def writing_study():
    """answering_study's lay system writing on the demo's four scenarios, beside the demo's LLM answers."""
    from surveys.models import Answer, System
    from surveys.services.answer_records import create_answer
    from surveys.services.answer_shape import FeatureIn
    from tests.surveys.test_respondents import answering_study

    demo = json.loads(DEMO.read_text(encoding="utf-8"))
    study = answering_study(vignettes=4, m=1)
    Answer.objects.filter(system__study=study).delete()
    System.objects.filter(study=study, key="gpt").update(key="gpt-4o")
    System.objects.create(
        study=study, key="claude", label="Claude", kind="llm", provider="anthropic", model="claude", position=3
    )
    systems = {system.key: system for system in study.systems.all()}
    vignettes = dict(zip([v["key"] for v in demo["vignettes"]], study.vignettes.order_by("position"), strict=True))
    for item, vignette in zip(demo["vignettes"], vignettes.values(), strict=True):
        vignette.text, vignette.character = item["text"], item["character"]
        vignette.save(update_fields=["text", "character"])
    sources: dict[str, list[dict]] = {}
    for answer in demo["answers"]:
        if answer["system"] not in ("gpt-4o", "claude"):
            continue
        vignette = vignettes[answer["vignette"]]
        create_answer(
            system=systems[answer["system"]],
            vignette=vignette,
            features=[FeatureIn(**feature) for feature in answer["features"]],
            action=answer["action"],
            additional_information=answer.get("additional_information", ""),
            selected=True,
        )
        sources.setdefault(vignette.text, []).append(answer)
    return study, sources


def write_answers(base: str, study, sources, kinds: list[str], seed: int) -> dict[str, list[str]]:
    """Each writer writes one answer through Chromium; returns {kind: [PROLIFIC_PID, …]}."""
    from playwright.sync_api import sync_playwright

    from tests.e2e.browser import CHROMIUM_ARGS
    from tests.e2e.writers import write_as

    rng = random.Random(seed)
    pids: dict[str, list[str]] = {kind: [] for kind in dict.fromkeys(kinds)}
    started = time.monotonic()
    failed: Counter[str] = Counter()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        for n, kind in enumerate(kinds):
            pid = f"{n:024x}"
            try:
                write_as(
                    browser, base=base, slug=study.slug, pid=pid, study_id="b" * 24, kind=kind, rng=rng, sources=sources
                )
            except Exception as error:  # one writer's failure is reported, the run goes on
                failed[kind] += 1
                print(f"  writer {n} ({kind}) failed: {str(error).splitlines()[0]}", flush=True)
                continue
            pids[kind].append(pid)
            if (n + 1) % 50 == 0:
                print(f"  {n + 1} of {len(kinds)} writers ({time.monotonic() - started:.0f} s)", flush=True)
        browser.close()
    if failed:
        print(f"  writers whose page failed (left out): {dict(failed)}")
    return pids


def upper_bound(failures: int, n: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound of a rate seen `failures` times in `n`."""
    from scipy.stats import beta

    return 1.0 if failures >= n else float(beta.ppf(confidence, failures + 1, n - failures))


def lower_bound(successes: int, n: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson lower bound of a rate seen `successes` times in `n`."""
    from scipy.stats import beta

    return 0.0 if successes <= 0 else float(beta.ppf(1 - confidence, successes, n - successes + 1))


def _spread(values: list[float]) -> str:
    import numpy as np

    if not values:
        return "-"
    low, p5, mid, p95, high = np.percentile(values, [0, 5, 50, 95, 100])
    return f"{low:.2f} / {p5:.2f} / {mid:.2f} / {p95:.2f} / {high:.2f}"


def writer_rows(answers: dict[str, list]) -> list[dict]:
    """One row per answer: its writer's kind, rating and time signals (for --rows, to pool runs)."""
    from surveys.services.authenticity import summary

    rows = []
    for kind, group in answers.items():
        for answer in group:
            totals = summary(answer.writing_signals) if answer.writing_signals else {}
            rows.append({"kind": kind, "rating": answer.authenticity} | {k: totals.get(k) for k in ROW_TOTALS})
    return rows


ROW_TOTALS = ("chars", "keys", "corrections", "chars_per_second", "key_intervals", "key_interval_cv")


def report_writers(pids: dict[str, list[str]], study, rows_path: str | None = None) -> None:
    from surveys.models import RespondentTask
    from surveys.services.authenticity import summary
    from surveys.services.authenticity_report import content_checks
    from tests.e2e.writers import HONEST_KINDS

    answers = {}
    for kind, group in pids.items():
        tasks = RespondentTask.objects.filter(respondent__prolific_pid__in=group, answer__isnull=False)
        answers[kind] = [task.answer for task in tasks.select_related("answer")]
    if rows_path:
        Path(rows_path).write_text(json.dumps(writer_rows(answers)), encoding="utf-8")
    print("\n| writer | n | high | mixed | low | unknown |\n| --- | --- | --- | --- | --- | --- |")
    ratings = {}
    for kind in [k for k in dict.fromkeys((*HONEST_KINDS, *sorted(pids))) if k in pids]:
        ratings[kind] = r = Counter(answer.authenticity for answer in answers[kind])
        honest = "honest" if kind in HONEST_KINDS else "cheat"
        print(f"| {honest}: {kind} | {len(pids[kind])} | {r['high']} | {r['mixed']} | {r['low']} | {r['unknown']} |")

    honest = [kind for kind in HONEST_KINDS if kind in pids]
    n = sum(len(pids[kind]) for kind in honest)
    low = sum(ratings[kind]["low"] for kind in honest)
    if n:
        bound = upper_bound(low, n)
        print(
            f"\nhonest rated low: {low} of {n} ({low / n:.2%}; one-sided 95% upper bound {bound:.2%}; goal <= 1%, < 2%)"
        )
    brief = [kind for kind in BRIEF_KINDS if kind in pids]
    if brief:
        high, n = sum(ratings[k]["high"] for k in brief), sum(len(pids[k]) for k in brief)
        print(f"honest brief and quoting rated high: {high} of {n} ({high / n:.1%}; goal >= 80%)")
    for kind in [k for k in MUST_BE_LOW if pids.get(k)]:
        low, n = ratings[kind]["low"], len(pids[kind])
        print(f"{kind} rated low: {low} of {n} ({low / n:.0%}, 95% lower bound {lower_bound(low, n):.0%}; goal >= 95%)")

    print("\ntime signals per kind, min / 5% / median / 95% / max:")
    print(
        "| writer | characters per focused second | key intervals' variation (>= 50 intervals) |\n| --- | --- | --- |"
    )
    for kind in ratings:
        totals = [summary(a.writing_signals) for a in answers[kind] if a.writing_signals]
        speeds = [t["chars_per_second"] for t in totals if t["chars_per_second"] is not None]
        cvs = [t["key_interval_cv"] for t in totals if t["key_interval_cv"] is not None and t["key_intervals"] >= 50]
        print(f"| {kind} | {_spread(speeds)} | {_spread(cvs)} ({len(cvs)} answers) |")

    if "retyper" in answers:
        checks = content_checks(study)
        collected = other = 0
        similarities = []
        for answer in answers["retyper"]:
            check = checks[answer.pk]
            collected += check.llm.near_duplicate
            similarities.append(check.llm.similarity or 0.0)
            other += _closest_other_llm(answer, check) >= 0.8
        n = len(answers["retyper"])
        print(
            f"\nretyped LLM answers the content check finds (closest LLM answer >= 0.8): {collected} of {n} when the "
            f"chatbot's answer is the study's (median similarity {sorted(similarities)[n // 2]:.2f}); "
            f"{other} of {n} when it came from the other chatbot"
        )


def _closest_other_llm(answer, check) -> float:
    """The retyped answer's similarity to the study's LLM answers other than the one it copied."""
    from surveys.models import Answer
    from surveys.services.text_similarity import answer_text, tfidf_matrix

    group = list(
        Answer.objects.for_study(answer.system.study).filter(vignette=answer.vignette).prefetch_related("features")
    )
    matrix = tfidf_matrix([answer_text(a) for a in group])
    row = next(i for i, a in enumerate(group) if a.pk == answer.pk)
    others = [i for i, a in enumerate(group) if a.system.kind == "llm" and a.system_id != check.llm.answer.system_id]
    return max((float(matrix[i] @ matrix[row]) for i in others), default=0.0)


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
    parser.add_argument("--honest", type=int, default=36, help="honest writers, over the honest kinds")
    parser.add_argument("--cheats", type=int, default=4, help="writers of each cheating kind")
    parser.add_argument("--repetitions", type=int, default=10, help="judgments per cell in the judge part")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", help="only these kinds of writer, comma-separated (e.g. constant,retyper)")
    parser.add_argument("--rows", help="also write one JSON row per answer here (kind, rating, time signals)")
    parser.add_argument("--ability-scale", type=float, default=1.0, help="multiplies the systems' abilities")
    parser.add_argument("--skip-writers", action="store_true", help="only the judge part (no browser)")
    parser.add_argument("--skip-judges", action="store_true", help="only the writers part")
    args = parser.parse_args()

    directory = Path(tempfile.mkdtemp(prefix="mj-authenticity-"))
    env = server_env(f"sqlite:///{directory}/bench.sqlite3")
    setup_django(env)
    started = time.monotonic()
    if not args.skip_writers:
        study, sources = writing_study()
        port = free_port()
        with open(directory / "gunicorn.log", "w") as log:
            server = start_gunicorn(env, workers=1, port=port, log=log)
            try:
                kinds = writer_kinds(args.honest, args.cheats, random.Random(args.seed))
                kinds = [kind for kind in kinds if not args.only or kind in args.only.split(",")]
                pids = write_answers(f"http://127.0.0.1:{port}", study, sources, kinds, args.seed)
            finally:
                server.terminate()
                server.wait(timeout=30)
        report_writers(pids, study, args.rows)
    if not args.skip_judges:
        judge_flags(args.repetitions, args.seed, args.ability_scale)
    print(f"\n(took {time.monotonic() - started:.0f} s; database {directory})")


if __name__ == "__main__":
    main()
