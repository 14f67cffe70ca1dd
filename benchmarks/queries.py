"""SQL statements per request of the judging survey, per step and per finished judge (deterministic).

One process, the Django test client, the real pages and database: judges walk entry -> consent ->
demographics -> k pairs -> attention check -> completion page, and every request's statements are
captured. On PostgreSQL the server also receives a BEGIN and a COMMIT (or ROLLBACK) for every
transaction the request commits: production runs in autocommit with `transaction.atomic` where it
matters (no ATOMIC_REQUESTS), so the table counts those too ("total" = SQL + 2 × transactions).
Server time is each step's median over the judges, as a ratio to a `/healthz` request measured in the
same process (a timing, so only a guide on a shared machine; the statement counts are exact). The
steadier figure is the last: server CPU per finished judge (this process's CPU time, and the PostgreSQL
backend's from /proc) as a ratio to a /healthz request's, over `--cpu-judges` judges alternating with
rounds of /healthz; CPU time moves far less than wall time when other work shares the machine.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/mj python benchmarks/queries.py --judges 5
    … benchmarks/queries.py --baseline-tree /tmp/before   # that checkout measured first, then the ratios

`--baseline-tree` runs another checkout's own queries.py (say `git worktree add /tmp/before main`, before a
change) in a subprocess with the same options, just before this tree, and prints both and the ratios: its
statements per judge, its server CPU per judge (and per /healthz) and the judges per second of server CPU
(one process, Django's CPU plus the PostgreSQL backend's), so a change is compared in one invocation.
A throwaway test database (`test_<name>`) is created, migrated and dropped. `--record` rewrites the
budget that tests/surveys/test_query_budget.py holds the pages to (tests/fixtures/query_budget.json), from
a judge served by a process that has read the live study already, as a web process in production has.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
FORM_ENCODED = "application/x-www-form-urlencoded"
BUDGET_FILE = ROOT / "tests" / "fixtures" / "query_budget.json"
STEPS = [
    "entry GET",
    "consent GET",
    "consent POST",
    "demographics GET",
    "demographics POST",
    "pair GET",
    "pair POST",
    "check GET",
    "check POST",
    "done GET",
]


@dataclass
class Count:
    sql: int = 0  # statements the request sent, as Django logged them
    transactions: int = 0  # transactions it committed or rolled back
    logged_control: int = 0  # BEGIN/COMMIT/ROLLBACK among `sql` (Django logs them on some versions)
    seconds: float = 0.0

    @property
    def total(self) -> int:
        """Statements the server received: BEGIN and COMMIT/ROLLBACK counted once each, logged or not."""
        return self.sql - self.logged_control + 2 * self.transactions


@dataclass
class Walk:
    """One judge's requests: step name -> one Count per request of that step."""

    requests: dict[str, list[Count]] = field(default_factory=lambda: defaultdict(list))

    def per_judge(self) -> Count:
        counts = [c for step in self.requests.values() for c in step]
        return Count(
            sum(c.sql for c in counts),
            sum(c.transactions for c in counts),
            sum(c.logged_control for c in counts),
            sum(c.seconds for c in counts),
        )


@contextmanager
def counting():
    """Capture the statements and the commits/rollbacks (each a BEGIN plus a COMMIT or ROLLBACK on the server)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    count = Count()
    commit, rollback = connection._commit, connection._rollback

    def counted(original):
        def call(*args, **kwargs):
            if connection.connection is not None and not connection.get_autocommit():
                count.transactions += 1
            return original(*args, **kwargs)

        return call

    connection._commit, connection._rollback = counted(commit), counted(rollback)
    started = time.perf_counter()
    try:
        with CaptureQueriesContext(connection) as captured:
            yield count
    finally:
        count.seconds = time.perf_counter() - started
        connection._commit, connection._rollback = commit, rollback
        count.sql = len(captured.captured_queries)
        count.logged_control = sum(q["sql"] in ("BEGIN", "COMMIT", "ROLLBACK") for q in captured.captured_queries)


def build_study(*, slug: str = "queries", systems: int = 3, vignettes: int = 6, k: int = 5, repetitions: int = 30):
    """A live study through the researcher's import command, with room for many judges of k pages.

    3 systems x 6 vignettes x R=30: 540 places, so the judges measured are not among the last places,
    which are chosen one arrival at a time (two statements more: docs/allocation.md).
    """
    sys.path.insert(0, str(ROOT))
    from benchmarks.harness import import_study_file, judging_study_file
    from surveys.models import Study

    data = judging_study_file(slug=slug, systems=systems, vignettes=vignettes, repetitions=repetitions, k=k)
    with tempfile.TemporaryDirectory() as directory:
        import_study_file(data, Path(directory))
    # Simulated judges take well under a second: no time minimum, so every one finishes valid.
    Study.objects.filter(slug=slug).update(minimum_seconds=0)
    return Study.objects.get(slug=slug)


def warm(study) -> None:
    """Read the live study as a web process that has served it a while has: its language and its snapshot."""
    from surveys.services.live_content import study_language
    from surveys.services.snapshots import read_pieces

    study_language(study.slug)
    study.refresh_from_db()
    read_pieces(study.snapshot_id, ["head"])  # the snapshot in the cache


@contextmanager
def cpu_timing():
    """The CPU seconds this process spends on the request (no statement capture, which costs CPU itself)."""
    count = Count()
    started = time.process_time()
    try:
        yield count
    finally:
        count.seconds = time.process_time() - started


def backend_cpu_seconds() -> float:
    """CPU seconds the PostgreSQL backend serving this process's connection has used (Linux /proc; else 0)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return 0.0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:  # a database on another host
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


_HANDLER: list = []


def walk_one_judge(study, number: int, measure=counting) -> Walk:
    """Send one judge through every page with the test client, counting each request (or timing its CPU)."""
    from django.test import Client

    sys.path.insert(0, str(ROOT))
    from benchmarks.harness import DEMOGRAPHICS

    client, walk = Client(), Walk()
    # One handler for every judge, as a web process loads its middleware once: a new test client would
    # load it again on its first request (WhiteNoise scans every static file then), which no server does.
    if _HANDLER:
        client.handler = _HANDLER[0]
    else:
        _HANDLER.append(client.handler)

    def request(step: str, method: str, url: str, data: dict | None = None, expect: int = 200):
        with measure() as count:
            # Posted as a browser posts a form (urlencoded): the test client's default, multipart, costs
            # the server a parse no judge's browser asks of it.
            response = (
                client.post(url, urlencode(data or {}), content_type=FORM_ENCODED)
                if method == "POST"
                else client.get(url)
            )
        assert response.status_code == expect, (step, url, response.status_code)
        walk.requests[step].append(count)
        return response.headers.get("Location", url)

    pid, session = f"{number:024x}", f"{number + 10**6:024x}"
    url = request(
        "entry GET",
        "GET",
        f"/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=60aa11bb22cc33dd44ee55ff&SESSION_ID={session}",
        expect=302,
    )
    request("consent GET", "GET", url)
    url = request("consent POST", "POST", url, {"consent": "yes", "anonymised": "yes"}, expect=302)
    request("demographics GET", "GET", url)
    url = request("demographics POST", "POST", url, DEMOGRAPHICS, expect=302)
    keys = list(study.questions.values_list("key", flat=True))
    for page in range(study.vignettes_per_participant):
        request("pair GET", "GET", url)
        picks = {key: "first" if (page + i) % 2 else "second" for i, key in enumerate(keys)}
        url = request("pair POST", "POST", url, picks, expect=302)
    request("check GET", "GET", url)
    url = request("check POST", "POST", url, {"choice": "2"}, expect=302)
    request("done GET", "GET", url)
    return walk


def healthz_seconds(repeat: int = 50) -> float:
    from django.test import Client

    client = Client()
    client.get("/healthz")  # warm
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        client.get("/healthz")
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


@dataclass
class ServerCpu:
    """Per finished judge and per /healthz request: this process's CPU and the database backend's."""

    judge: list[float]  # one per judge walked
    healthz: list[float]  # one per round of `per_round` requests, per request
    judge_backend: float
    healthz_backend: float

    def ratio(self, *, with_database: bool) -> float:
        judge, healthz = statistics.median(self.judge), statistics.median(self.healthz)
        if with_database:
            judge, healthz = judge + self.judge_backend, healthz + self.healthz_backend
        return judge / healthz


def server_cpu(study, *, judges: int, first_number: int, rounds: int = 5, per_round: int = 200) -> ServerCpu:
    """CPU time, not wall time: what a request costs the server, hardly moved by other work on the machine.

    Judges and /healthz rounds alternate, so a slower stretch of the machine weighs on both alike. The
    backend's CPU comes from /proc in clock ticks, so it is summed over every judge (or request) and divided.
    """
    from django.test import Client

    client = Client()
    client.get("/healthz")  # warm
    judge, healthz = [], []
    judge_backend = healthz_backend = 0.0
    for n in range(judges):
        backend = backend_cpu_seconds()
        judge.append(walk_one_judge(study, first_number + n, measure=cpu_timing).per_judge().seconds)
        judge_backend += backend_cpu_seconds() - backend
        if n % max(1, judges // rounds) == 0:
            backend, started = backend_cpu_seconds(), time.process_time()
            for _ in range(per_round):
                client.get("/healthz")
            healthz.append((time.process_time() - started) / per_round)
            healthz_backend += backend_cpu_seconds() - backend
    return ServerCpu(judge, healthz, judge_backend / judges, healthz_backend / (len(healthz) * per_round))


def cpu_report(cpu: ServerCpu) -> str:
    judge, healthz = statistics.median(cpu.judge), statistics.median(cpu.healthz)
    spread = f"{min(cpu.judge) / healthz:.0f}-{max(cpu.judge) / healthz:.0f}x over judges"
    return "\n".join(
        [
            f"server CPU per finished judge: {judge * 1000:.1f} ms in Django + {cpu.judge_backend * 1000:.1f} ms in "
            f"the PostgreSQL backend; per /healthz {healthz * 1000:.3f} ms + {cpu.healthz_backend * 1000:.3f} ms "
            f"({len(cpu.judge)} judges, {len(cpu.healthz)} rounds of /healthz)",
            f"a finished judge = {cpu.ratio(with_database=False):.0f}x a /healthz request in Django's CPU ({spread}), "
            f"{cpu.ratio(with_database=True):.0f}x with the database backend's",
        ]
    )


def python_calls(work) -> int:
    """Python function calls made while `work()` runs (cProfile's count: the same in every run of the same code)."""
    profile = cProfile.Profile()
    profile.enable()
    try:
        work()
    finally:
        profile.disable()
    return pstats.Stats(profile).total_calls  # type: ignore[attr-defined]  # (not in typeshed)


def calls_report(study, *, judges: int, first_number: int) -> str:
    """A judge's Python function calls per a /healthz request's: a proxy of CPU that other load cannot move.

    Not a time: C code (the database driver, the template engine's string joins) counts for nothing here,
    so use it to compare two trees on a busy machine, and the CPU ratio above for the figure itself.
    """
    from django.test import Client

    client = Client()
    client.get("/healthz")
    judge = python_calls(lambda: [walk_one_judge(study, first_number + n, measure=cpu_timing) for n in range(judges)])
    healthz = python_calls(lambda: [client.get("/healthz") for _ in range(100)])
    per_judge, per_healthz = judge / judges, healthz / 100
    return (
        f"Python function calls per finished judge {per_judge:,.0f}, per /healthz {per_healthz:,.0f}: "
        f"{per_judge / per_healthz:.0f}x ({judges} judges; deterministic, a proxy for comparing trees under load)"
    )


def statements_per_step(walk: Walk) -> dict[str, int]:
    """The most statements any request of each step took (total, BEGIN/COMMIT included), and per judge."""
    table = {step: max(c.total for c in walk.requests[step]) for step in STEPS}
    table["per judge"] = walk.per_judge().total
    return table


def report(walks: list[Walk], baseline: float) -> str:
    """The table for the last judge, in a process that has read the live study (the steady state)."""
    first = walks[-1]
    lines = [
        f"{'step':<18} {'requests':>8} {'SQL':>5} {'tx':>3} {'total':>6}   {'median ms':>9} {'x /healthz':>10}",
    ]
    for step in STEPS:
        counts = first.requests[step]
        seconds = statistics.median(c.seconds for w in walks for c in w.requests[step])
        worst = max(counts, key=lambda c: c.total)
        lines.append(
            f"{step:<18} {len(counts):>8} {worst.sql - worst.logged_control:>5} {worst.transactions:>3} {worst.total:>6}   "
            f"{seconds * 1000:>9.1f} {seconds / baseline:>10.1f}"
        )
    judge = first.per_judge()
    judge_seconds = statistics.median(w.per_judge().seconds for w in walks)
    lines.append(
        f"{'per judge':<18} {sum(len(c) for c in first.requests.values()):>8} {judge.sql - judge.logged_control:>5} "
        f"{judge.transactions:>3} {judge.total:>6}   {judge_seconds * 1000:>9.1f} {judge_seconds / baseline:>10.1f}"
    )
    lines.append(f"/healthz median {baseline * 1000:.2f} ms in this process; {len(walks)} judges")
    return "\n".join(lines)


SUMMARY = {
    "statements": re.compile(r"^per judge\s+\d+\s+\d+\s+\d+\s+(\d+)", re.M),
    "django_ms": re.compile(r"server CPU per finished judge: ([\d.]+) ms in Django"),
    "backend_ms": re.compile(r"ms in Django \+ ([\d.]+) ms in the PostgreSQL backend"),
    "ratio": re.compile(r"a finished judge = (\d+)x a /healthz request in Django's CPU"),
    "ratio_with_database": re.compile(r"x over judges\), (\d+)x with the database backend's"),
}


def summary(output: str) -> dict[str, float]:
    """The figures a run printed (either tree's queries.py prints them alike)."""
    found = {name: pattern.search(output) for name, pattern in SUMMARY.items()}
    values = {name: float(match.group(1)) for name, match in found.items() if match}
    if "django_ms" in values:
        values["judges_per_cpu_second"] = 1000 / (values["django_ms"] + values.get("backend_ms", 0.0))
    return values


def compare(before: dict[str, float], after: dict[str, float]) -> str:
    lines = [f"{'':<34} {'baseline':>10} {'this tree':>10} {'ratio':>7}"]
    names = {
        "statements": "statements per finished judge",
        "django_ms": "Django CPU ms per judge",
        "backend_ms": "PostgreSQL backend CPU ms per judge",
        "ratio": "judge / healthz CPU (Django)",
        "ratio_with_database": "judge / healthz CPU (with database)",
        "judges_per_cpu_second": "judges/s per server CPU second",
    }
    for key, label in names.items():
        if key in before and key in after:
            ratio = after[key] / before[key] if before[key] else float("nan")
            lines.append(f"{label:<34} {before[key]:>10.1f} {after[key]:>10.1f} {ratio:>6.2f}x")
    return "\n".join(lines)


def run_baseline(tree: Path, argv: list[str]) -> str:
    """The other checkout's queries.py with the same options (its own code, models and migrations)."""
    skip = {"--baseline-tree", "--record"}
    passed, values = [], iter(argv)
    for arg in values:
        name = arg.split("=", 1)[0]
        if name in skip:
            if name == "--baseline-tree" and "=" not in arg:
                next(values, None)
            continue
        passed.append(arg)
    done = subprocess.run(
        [sys.executable, str(tree / "benchmarks" / "queries.py"), *passed],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"the baseline's queries.py failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judges", type=int, default=5, help="judges walked after the first (timings: their median)")
    parser.add_argument("--cpu-judges", type=int, default=20, help="judges walked for the CPU-time ratio (0: none)")
    parser.add_argument("--call-judges", type=int, default=5, help="judges walked for the Python-calls ratio (0: none)")
    parser.add_argument("--record", action="store_true", help=f"write the first judge's counts to {BUDGET_FILE}")
    parser.add_argument("--baseline-tree", type=Path, help="another checkout, measured first in the same invocation")
    args = parser.parse_args(argv)
    baseline_output = ""
    if args.baseline_tree:
        baseline_output = run_baseline(args.baseline_tree.resolve(), list(sys.argv[1:] if argv is None else argv))
        print(f"== baseline: {args.baseline_tree}\n{baseline_output.rstrip()}\n== this tree: {ROOT}")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")
    os.environ.setdefault("SECRET_KEY", "benchmark-only-secret")
    os.environ["DEBUG"] = "0"
    os.environ["ENTRY_RATE_LIMIT"] = "off"
    os.environ["ALLOWED_HOSTS"] = "testserver"
    os.environ.setdefault("STATIC_MANIFEST", "0")  # no collectstatic needed: templates only name the files
    os.environ.setdefault("ENV_FILE", "")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.db import connection

    # No setup_test_environment(): it wraps every template render to record its context for tests, CPU
    # no web process spends. The test client's host is allowed instead.
    warnings.filterwarnings("ignore", message="No directory at")  # WhiteNoise: no collectstatic here
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        study = build_study()
        baseline = healthz_seconds()
        fresh = walk_one_judge(study, 0)  # the first judge a fresh process serves
        warm(study)
        walks = [walk_one_judge(study, n) for n in range(1, args.judges + 1)]
        printed = [f"database: {connection.vendor}", report(walks, baseline)]
        printed.append(
            f"the first judge of a fresh process (reads the live study once): {fresh.per_judge().total} statements"
        )
        if args.cpu_judges:
            printed.append(cpu_report(server_cpu(study, judges=args.cpu_judges, first_number=args.judges + 1)))
        print("\n".join(printed))
        if baseline_output:
            print(compare(summary(baseline_output), summary("\n".join(printed))))
        if args.call_judges:
            first = args.judges + args.cpu_judges + 1
            print(calls_report(study, judges=args.call_judges, first_number=first))
        if args.record:
            BUDGET_FILE.write_text(json.dumps(statements_per_step(walks[-1]), indent=2) + "\n", encoding="utf-8")
            print(f"budget written to {BUDGET_FILE.relative_to(ROOT)}")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
