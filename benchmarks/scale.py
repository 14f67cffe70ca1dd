"""Refit, exports and pages as a study grows: N stored judgments, for N = 100k, 1M and 10M.

Run: `python benchmarks/scale.py [--sizes 100000,1000000,10000000]`. It creates a fresh PostgreSQL
database (dropped at the end unless --keep), builds one live study through `manage.py import_study`
(8 systems x 12 vignettes, the five questions, k = 5 vignettes per judge), then grows it to each N in
turn: judges, their assignments and their judgments are written by INSERT ... SELECT inside PostgreSQL
(25 judgments per judge, so 400,000 judges at 10M), through the tables' constraints and triggers,
and each cell's `completed` counter is set to what it holds. Judgments are drawn from planted
abilities with an order effect, so the fits have something to find.

At each N it measures:
- `manage.py refit SLUG` (1,000 participant-clustered bootstrap replicates, split halves, per
  vignette, two-way intervals) in a subprocess: wall time and peak memory (the child's max RSS
  from os.wait4);
- each CSV export over HTTP from gunicorn (one sync worker allowed an hour per request, logged in
  as staff): time to the first byte, total time, size and the worker's peak memory (VmHWM, reset
  through /proc/PID/clear_refs before each export);
- the judging page (GET + POST) and the attention-check POST (which computes the "too fast"
  median) at concurrency 20, as p95 ratios to the trivial /healthz view measured just before on
  the same server (3 sync workers): simulated judges walk the whole survey on the big study.

Then it prints one table and, from one N to the next, the growth factors (issue 13's targets:
refit and exports at most 11x per 10x judgments; page ratios flat within 20%). `--keep` leaves the
database; `--reuse` measures (and grows on) the study it holds; `--refit-only` measures the refit
alone (its wall time, peak and phases: reading, bootstrap weights, fitting, storing); `--fragility-ratio` refits
each N a second time with the run parameter `fragility` false and prints the ratio of the walls (docs/statistics.md,
"Fragility"); `--rows FILE`
appends each N's measurements as JSON lines, and `--table-from FILE` prints the table of such a file.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (
    PYTHON,
    ROOT,
    Recorder,
    drop_database,
    free_port,
    fresh_database,
    import_study_file,
    judge,
    judging_study_file,
    new_client,
    p95,
    run_pool,
    server_env,
    setup_django,
    start_gunicorn,
)

SLUG = "scale"
SYSTEMS = 8
VIGNETTES = 12
K = 5  # vignettes per judge
QUESTIONS = 5
PER_JUDGE = K * QUESTIONS
TARGET = 32_000  # judges wanted per cell: room for 10M judgments (~6,000 a cell) and the page judges
EXPORTS = ("judgments.csv", "bradleyterry2.csv", "results.csv", "demographics.csv")
STAFF = ("scale-bench", "scale-bench-password-1")


# The study's shape --------------------------------------------------------------------------------------
def build_study(directory: Path):
    """The live study, through the researcher's own import command."""
    from surveys.models import Study

    data = judging_study_file(slug=SLUG, systems=SYSTEMS, vignettes=VIGNETTES, repetitions=TARGET, k=K)
    data["quality"] = {"fast_fraction_of_median": 0.01}  # the median is asked for at every finish
    import_study_file(data, directory)
    return Study.objects.get(slug=SLUG)


# Planted log-abilities by system position, and P(first shown wins) = expit(l_first - l_second + ORDER).
ABILITIES = [0.0, 0.4, -0.3, 0.8, 0.1, -0.6, 0.5, 0.2]
ORDER = 0.15

GROW = """
WITH made AS (
    INSERT INTO surveys_participant (
        prolific_pid, prolific_study_id, session_id, is_preview, status, exclusion, flags, consented_at,
        anonymised_data_consent, demographics, attention_choice, first_position_share, seconds_total,
        prolific_status, review_status, started_at, finished_at, study_id)
    SELECT 'scale' || lpad(g::text, 19, '0'), 'scale-study', 'scale-session-' || g, false, 'completed', '', '[]',
        now(), true, %(demographics)s::jsonb, 2, 0.5, 300 + (g %% 600), '', %(review)s, now(), now(), %(study)s
    FROM generate_series(%(start)s, %(stop)s - 1) AS g
    RETURNING id
), placed AS (
    INSERT INTO surveys_assignment (
        position, status, counts_toward_cell, reserved_at, expires_at, shown_at, completed_at, seconds,
        first_answer_id, second_answer_id, cell_id, participant_id, vignette_id)
    SELECT pick.page + 1, 'completed', true, now(), now(), now(), now(), 60,
        CASE WHEN (pick.participant + pick.page) %% 2 = 0 THEN c.answer_a_id ELSE c.answer_b_id END,
        CASE WHEN (pick.participant + pick.page) %% 2 = 0 THEN c.answer_b_id ELSE c.answer_a_id END,
        c.id, pick.participant, c.vignette_id
    FROM (
        -- k different vignettes per judge, and on each a pair drawn at random, as allocation spreads them
        SELECT made.id AS participant, page,
            ((made.id + page) %% %(vignettes)s) * %(pairs)s + floor(random() * %(pairs)s)::int AS number
        FROM made CROSS JOIN generate_series(0, %(k)s - 1) AS page
    ) AS pick
    JOIN scale_cell AS c ON c.number = pick.number
    RETURNING id, first_answer_id, second_answer_id
)
INSERT INTO surveys_judgment (winner_position, seconds_on_page, created_at, assignment_id, winner_id, loser_id, question_id)
SELECT CASE WHEN first_wins THEN 'first' ELSE 'second' END, 10, now(), id,
    CASE WHEN first_wins THEN first_answer_id ELSE second_answer_id END,
    CASE WHEN first_wins THEN second_answer_id ELSE first_answer_id END,
    question_id
FROM (
    SELECT placed.id, placed.first_answer_id, placed.second_answer_id, q.id AS question_id,
        random() < 1 / (1 + exp(-(fa.ability - sa.ability + %(order)s))) AS first_wins
    FROM placed
    JOIN scale_answer AS fa_answer ON fa_answer.id = placed.first_answer_id
    JOIN scale_ability AS fa ON fa.system_id = fa_answer.system_id
    JOIN scale_answer AS sa_answer ON sa_answer.id = placed.second_answer_id
    JOIN scale_ability AS sa ON sa.system_id = sa_answer.system_id
    CROSS JOIN surveys_question AS q
    WHERE q.study_id = %(study)s
) AS drawn
"""


def grow_study(study, *, judges_before: int, judges_after: int, batch: int = 20_000) -> None:
    """Judges judges_before .. judges_after - 1, each with K completed assignments and their judgments."""

    from django.db import connection, transaction

    from surveys.models import Cell, Participant

    pairs = SYSTEMS * (SYSTEMS - 1) // 2
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(%s)", [(judges_before % 1000) / 1000])
        cursor.execute(
            "CREATE TEMP TABLE IF NOT EXISTS scale_cell AS SELECT id, vignette_id, answer_a_id, answer_b_id, "
            "(row_number() OVER (ORDER BY vignette_id, id) - 1) AS number FROM surveys_cell WHERE study_id = %s",
            [study.pk],
        )
        cursor.execute(
            "CREATE TEMP TABLE IF NOT EXISTS scale_answer AS SELECT a.id, a.system_id FROM surveys_answer a "
            "JOIN surveys_system s ON s.id = a.system_id WHERE s.study_id = %s",
            [study.pk],
        )
        cursor.execute(
            "CREATE TEMP TABLE IF NOT EXISTS scale_ability AS SELECT id AS system_id, "
            f"(ARRAY[{', '.join(str(x) for x in ABILITIES)}])[row_number() OVER (ORDER BY position, id)]::float AS ability "
            "FROM surveys_system WHERE study_id = %s",
            [study.pk],
        )
        cursor.execute("SELECT count(*) FROM scale_cell")
        if cursor.fetchone()[0] != VIGNETTES * pairs:
            raise SystemExit("the study's cells are not one per system pair and vignette")
    review = Participant._meta.get_field("review_status").get_default()
    demographics = json.dumps({"gender": "Prefer not to say", "age": "35-44", "country": "United Kingdom"})
    for start in range(judges_before, judges_after, batch):
        stop = min(start + batch, judges_after)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                GROW,
                {
                    "start": start,
                    "stop": stop,
                    "study": study.pk,
                    "k": K,
                    "vignettes": VIGNETTES,
                    "pairs": pairs,
                    "order": ORDER,
                    "demographics": demographics,
                    "review": review,
                },
            )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE surveys_cell AS c SET completed = n.done FROM (SELECT cell_id, count(*) AS done "
            "FROM surveys_assignment WHERE status = 'completed' GROUP BY cell_id) AS n "
            "WHERE c.id = n.cell_id AND c.study_id = %s",
            [study.pk],
        )
    with connection.cursor() as cursor:
        for table in ("surveys_participant", "surveys_assignment", "surveys_judgment", "surveys_cell"):
            cursor.execute(f"VACUUM ANALYZE {table}")
    assert Cell.objects.filter(study=study).count() == VIGNETTES * pairs


# Measurements -------------------------------------------------------------------------------------------
# The refit `manage.py refit` makes, with the run parameter `fragility` false (the command has no such flag: a
# refit always computes it); it prints what the command prints first, and the phases.
WITHOUT_FRAGILITY = """
import sys
from analysis.models import AnalysisRun
from analysis.services import refit_study
from surveys.models import Study
slug, bootstrap = sys.argv[1], int(sys.argv[2])
run = refit_study(study=Study.objects.get(slug=slug), trigger=AnalysisRun.Trigger.COMMAND,
                  parameters={"order_effect": False, "bootstrap": bootstrap, "fragility": False})
assert run.status == AnalysisRun.Status.DONE, run.error
print(f"Run {run.pk} of {slug!r}: {run.n_judgments} valid judgments, without fragility, data {run.data_hash[:12]}.")
print("Phases: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in run.phase_seconds.items()))
"""


def measure_refit(env: dict, *, bootstrap: int, fragility: bool = True) -> dict:
    """`manage.py refit` in a child process: wall seconds and the child's own peak RSS (os.wait4); with `fragility`
    false, the same refit without the fragility of each significant result."""
    command = [PYTHON, "manage.py", "refit", SLUG, f"--bootstrap={bootstrap}"]
    if not fragility:
        command = [PYTHON, "-c", "import django; django.setup()\n" + WITHOUT_FRAGILITY, SLUG, str(bootstrap)]
    start = time.perf_counter()
    child = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = child.stdout.read(), child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if child.returncode != 0:
        raise SystemExit(f"refit failed: {err.decode()[-2000:]}")
    lines = out.decode().splitlines()
    phases = next((line.removeprefix("Phases: ") for line in lines if line.startswith("Phases: ")), "")
    return {"seconds": seconds, "peak_mb": usage.ru_maxrss / 1024, "summary": lines[0], "phases": phases}


def logged_in_client(base: str) -> httpx.Client:
    client = new_client(base, timeout=600)
    page = client.get("/admin/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    username, password = STAFF
    done = client.post(
        "/admin/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": token, "next": "/admin/"},
    )
    if done.status_code != 302:
        raise SystemExit(f"staff login failed: {done.status_code}")
    return client


def worker_pids(server: subprocess.Popen) -> list[int]:
    children = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
    return [int(pid) for pid in children]


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak(pid: int) -> None:
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # 5: reset the peak RSS (VmHWM) to the current RSS


def measure_exports(env: dict) -> dict:
    """Each export from a one-worker gunicorn: first byte, total, size, and the worker's peak RSS."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # A sync worker's request may last `timeout` seconds: ten million judgments stream for minutes.
    server = start_gunicorn(env, workers=1, port=port, timeout=3600)
    results = {}
    try:
        client = logged_in_client(base)
        (worker,) = worker_pids(server)
        for name in EXPORTS:
            reset_peak(worker)
            start = time.perf_counter()
            first_byte, size = None, 0
            with client.stream("GET", f"/dashboard/{SLUG}/exports/{name}") as response:
                if response.status_code != 200:
                    raise SystemExit(f"export {name}: {response.status_code}")
                for chunk in response.iter_raw():
                    if first_byte is None:
                        first_byte = time.perf_counter() - start
                    size += len(chunk)
            results[name] = {
                "first_byte": first_byte,
                "seconds": time.perf_counter() - start,
                "mb": size / 2**20,
                "peak_mb": peak_rss_mb(worker),
            }
        client.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    return results


def measure_pages(env: dict, *, size: int, judges: int, concurrency: int, baseline_requests: int) -> dict:
    """p95 of the judging page and the attention POST over simulated judges, against /healthz's p95."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_gunicorn(env, workers=3, port=port)
    try:
        baseline = Recorder()

        def health(_):
            with new_client(base) as client:
                for _ in range(10):
                    baseline.request(client, "healthz", "GET", "/healthz", (200,))
            return "ok"

        run_pool(concurrency, range(concurrency), health)  # warm-up
        baseline = Recorder()
        run_pool(concurrency, range(baseline_requests // 10), health)
        rec = Recorder()
        questions = ["features", "weighting", "reasons", "conclusion", "additional_info"]
        numbers = range(10**12 + size, 10**12 + size + judges)  # page judges' PIDs never meet the generated ones
        outcomes, errors, _ = run_pool(concurrency, numbers, lambda n: judge(rec, base, SLUG, n, questions))
    finally:
        server.terminate()
        server.wait(timeout=30)
    if errors:
        raise SystemExit(f"page judges failed: {sorted(set(errors))[:3]}")
    healthz = p95(baseline.samples["healthz"])
    judging = rec.samples["judging page GET"] + rec.samples["judging page POST"]
    attention = rec.samples["attention POST"]
    return {
        "healthz_ms": healthz * 1000,
        "judging_ratio": p95(judging) / healthz,
        "attention_ratio": p95(attention) / healthz,
        "n_judging": len(judging),
        "n_attention": len(attention),
        "completed": outcomes.count("completed"),
    }


# Report -------------------------------------------------------------------------------------------------
def print_table(rows: list[dict]) -> None:
    heads = ["measure"] + [f"{row['size']:,}" for row in rows]
    lines = [("refit wall (s)", [f"{r['refit']['seconds']:.1f}" for r in rows])]
    lines.append(("refit peak memory (MB)", [f"{r['refit']['peak_mb']:.0f}" for r in rows]))
    for row in rows:
        print(f"refit phases at {row['size']:,} judgments: {row['refit'].get('phases') or 'not printed'}")
    exported = [name for name in EXPORTS if all(name in r["exports"] for r in rows)]  # none with --refit-only
    for name in exported:
        lines.append((f"{name} first byte (s)", [f"{r['exports'][name]['first_byte']:.2f}" for r in rows]))
        lines.append((f"{name} total (s)", [f"{r['exports'][name]['seconds']:.1f}" for r in rows]))
        lines.append((f"{name} size (MB)", [f"{r['exports'][name]['mb']:.1f}" for r in rows]))
        lines.append((f"{name} worker peak (MB)", [f"{r['exports'][name]['peak_mb']:.0f}" for r in rows]))
    lines.append(("judging page p95 / healthz p95", [f"{r['pages']['judging_ratio']:.2f}" for r in rows]))
    lines.append(("attention POST p95 / healthz p95", [f"{r['pages']['attention_ratio']:.2f}" for r in rows]))
    lines.append(("healthz p95 (ms)", [f"{r['pages']['healthz_ms']:.1f}" for r in rows]))
    if all("refit_without_fragility" in r for r in rows):
        without = [r["refit_without_fragility"] for r in rows]
        lines.append(("refit wall without fragility (s)", [f"{w['seconds']:.1f}" for w in without]))
        lines.append(
            (
                "refit wall, with ÷ without fragility",
                [f"{r['refit']['seconds'] / w['seconds']:.2f}" for r, w in zip(rows, without, strict=True)],
            )
        )
        for row in rows:
            print(f"refit phases without fragility at {row['size']:,}: {row['refit_without_fragility']['phases']}")
    print("| " + " | ".join(heads) + " |")
    print("|" + "---|" * len(heads))
    for label, values in lines:
        print(f"| {label} | " + " | ".join(values) + " |")
    for before, after in itertools.pairwise(rows):
        factor = after["size"] / before["size"]
        print(f"\ngrowth {before['size']:,} -> {after['size']:,} judgments ({factor:.0f}x):")
        growth = {"refit wall": after["refit"]["seconds"] / before["refit"]["seconds"]}
        growth["refit peak memory"] = after["refit"]["peak_mb"] / before["refit"]["peak_mb"]
        for name in exported:
            growth[f"{name} total"] = after["exports"][name]["seconds"] / before["exports"][name]["seconds"]
            growth[f"{name} first byte"] = after["exports"][name]["first_byte"] / before["exports"][name]["first_byte"]
            growth[f"{name} worker peak"] = after["exports"][name]["peak_mb"] / before["exports"][name]["peak_mb"]
        for key in ("judging_ratio", "attention_ratio"):
            growth[key.replace("_", " page ") if key == "judging_ratio" else "attention POST ratio"] = (
                after["pages"][key] / before["pages"][key]
            )
        limit = 1.1 * factor
        for label, value in growth.items():
            bound = 1.2 if "ratio" in label else limit
            verdict = "ok" if value <= bound else f"over {bound:.1f}x"
            print(f"  {label:<36} {value:6.2f}x  ({verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000,10000000", help="stored judgments, comma-separated")
    parser.add_argument("--bootstrap", type=int, default=1000, help="the refit's bootstrap replicates")
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--page-judges", type=int, default=100, help="simulated judges walking the survey per N")
    parser.add_argument("--baseline-requests", type=int, default=1000)
    parser.add_argument("--postgres", default=os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432"))
    parser.add_argument("--database", default="mj_scale_bench")
    parser.add_argument("--skip-pages", action="store_true", help="refit and exports only")
    parser.add_argument("--refit-only", action="store_true", help="the refit only: no exports, no pages")
    parser.add_argument(
        "--fragility-ratio",
        action="store_true",
        help="also refit each N without the fragility of each significant result (run parameter `fragility` false)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database afterwards")
    parser.add_argument("--reuse", action="store_true", help="measure the study a --keep run left, growing it on")
    parser.add_argument("--rows", type=Path, help="a JSON-lines file: each N's measurements are appended to it")
    parser.add_argument("--table-from", type=Path, help="print the table of a --rows file, and run nothing")
    args = parser.parse_args()
    if args.table_from:
        print_table([json.loads(line) for line in args.table_from.read_text().splitlines() if line.strip()])
        return
    sizes = sorted(int(size) for size in args.sizes.split(","))

    database_url = f"{args.postgres}/{args.database}" if args.reuse else fresh_database(args.postgres, args.database)
    env = server_env(database_url)
    setup_django(env)
    from django.contrib.auth import get_user_model
    from django.db import connections

    from surveys.models import Participant, Study

    if args.reuse:
        study = Study.objects.get(slug=SLUG)
        judges = Participant.objects.filter(study=study, prolific_study_id="scale-study").count()
    else:
        get_user_model().objects.create_user(username=STAFF[0], password=STAFF[1], is_staff=True, is_superuser=True)
        with tempfile.TemporaryDirectory() as directory:
            study = build_study(Path(directory))
        judges = 0
    load = os.getloadavg()
    print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the start")
    rows = []
    try:
        for size in sizes:
            wanted = size // PER_JUDGE
            start = time.perf_counter()
            grow_study(study, judges_before=judges, judges_after=max(wanted, judges))
            judges = max(wanted, judges)
            print(f"N={size:,}: {judges:,} judges stored in {time.perf_counter() - start:.0f} s", flush=True)
            connections.close_all()
            row = {"size": size, "refit": measure_refit(env, bootstrap=args.bootstrap)}
            print(f"  refit: {row['refit']}", flush=True)
            if args.fragility_ratio:
                row["refit_without_fragility"] = measure_refit(env, bootstrap=args.bootstrap, fragility=False)
                print(f"  refit without fragility: {row['refit_without_fragility']}", flush=True)
            row["exports"] = {} if args.refit_only else measure_exports(env)
            print(f"  exports: {row['exports']}", flush=True)
            if args.skip_pages or args.refit_only:
                row["pages"] = {
                    "judging_ratio": float("nan"),
                    "attention_ratio": float("nan"),
                    "healthz_ms": float("nan"),
                }
            else:
                row["pages"] = measure_pages(
                    env,
                    size=size,
                    judges=args.page_judges,
                    concurrency=args.concurrency,
                    baseline_requests=args.baseline_requests,
                )
            print(f"  pages: {row['pages']}", flush=True)
            rows.append(row)
            if args.rows:
                with args.rows.open("a") as out:
                    out.write(json.dumps({key: value for key, value in row.items()}) + "\n")
            load = os.getloadavg()
            print(f"  load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)
        print()
        print_table(rows)
    finally:
        connections.close_all()
        if not args.keep:
            drop_database(args.postgres, args.database)


if __name__ == "__main__":
    main()
