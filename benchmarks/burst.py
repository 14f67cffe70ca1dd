"""The burst the platform promises: N judges at once through the deployed gunicorn, today's code against a baseline.

Run: `python benchmarks/burst.py --baseline-tree /work/wt/base [--judges 5000] [--concurrency 200] [--nginx]`.

For each code tree (the baseline first, when `--baseline-tree` names a checkout of an older commit, then
this one) it makes a PostgreSQL database of its own, migrates it and imports a live study with that
tree's own `manage.py` (the study is sized so that the judges fill it exactly: 5 systems x 25 vignettes =
250 cells, R = judges x k / 250), starts gunicorn with the command in that tree's Dockerfile (its worker
class, workers and threads; DEBUG off) on 127.0.0.1 -- with `--nginx`, `--web-processes` such processes
behind Debian's nginx running that tree's deploy/nginx.conf -- and sends the judges through the whole survey
from one asyncio httpx client pool at `--concurrency` judges at a time: Prolific link -> consent ->
demographics -> k pairs -> attention check -> completion page (with its code). /healthz at the same
concurrency is measured first on the same server.

Printed per tree: judges completed, arrivals that found the study full, errors (any failed or unexpected
response), the wall time, judges/s and requests/s, /healthz requests/s; then from the database: judgments
acknowledged to judges vs stored (lost), cells over target (counters, and distinct judged assignments),
reservations left. Last, the ratios new / baseline. Exits 1 if a guarantee fails in the tree under test.
The load generator shares the machine's cores with the server, the same for both trees; run them
back-to-back (one invocation) so the ratio is fair, and note the load average (printed at the start).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shlex
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (
    CODE,
    CSRF,
    DEMOGRAPHICS,
    PYTHON,
    QUESTION_KEYS,
    ROOT,
    drop_database,
    free_port,
    fresh_database,
    judging_study_file,
    nginx_config,
    p95,
    server_env,
)

SLUG = "burst"
SYSTEMS, VIGNETTES = 5, 25  # 10 pairs x 25 vignettes = 250 cells


@dataclass
class Tally:
    requests: int = 0
    samples: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    acknowledged: int = 0  # judging pages the server confirmed (302 after the POST)
    outcomes: Counter[str] = field(default_factory=Counter)


class Failed(RuntimeError):
    pass


# The tree under measurement ------------------------------------------------------------------------------
def dockerfile_command(tree: Path, port: int, dockerfile_tree: Path | None = None) -> list[str]:
    """The web command the tree's image runs (Dockerfile CMD; `dockerfile_tree`'s instead when given), serving
    the tree's code on 127.0.0.1:port."""
    dockerfile = (dockerfile_tree or tree) / "Dockerfile"
    line = next(line for line in dockerfile.read_text().splitlines() if line.startswith("CMD "))
    command = json.loads(line[4:])
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    return [str(Path(PYTHON).parent / "gunicorn"), *command[1:], f"--chdir={tree}", "--log-level=warning"]


def prepare_database(tree: Path, env: dict, *, judges: int, k: int, workdir: Path) -> int:
    """Migrate and import the live study with the tree's own manage.py; returns R (judges per cell)."""
    cells = SYSTEMS * (SYSTEMS - 1) // 2 * VIGNETTES
    repetitions = max(1, judges * k // cells)
    study = judging_study_file(slug=SLUG, systems=SYSTEMS, vignettes=VIGNETTES, repetitions=repetitions, k=k)
    path = workdir / f"{SLUG}.study.json"
    path.write_text(json.dumps(study), encoding="utf-8")
    for command in (["migrate", "--verbosity=0"], ["collectstatic", "--no-input"], ["import_study", str(path)]):
        subprocess.run([PYTHON, "manage.py", *command], cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
    sql(env["DATABASE_URL"], "UPDATE surveys_study SET minimum_seconds = 0 WHERE slug = %s", [SLUG])
    return repetitions


def sql(url: str, query: str, params=()) -> list[tuple]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(query, params)
        return cursor.fetchall() if cursor.description else []


def start_servers(
    tree: Path, env: dict, *, processes: int, nginx: bool, workdir: Path, dockerfile_tree: Path | None
) -> tuple[list, str]:
    ports = [free_port() for _ in range(processes)]
    servers = [
        subprocess.Popen(dockerfile_command(tree, port, dockerfile_tree), cwd=tree, env=env, stdout=subprocess.DEVNULL)
        for port in ports
    ]
    for port in ports:
        wait_for(f"http://127.0.0.1:{port}/healthz", servers)
    if not nginx:
        return servers, f"http://127.0.0.1:{ports[0]}"
    proxy_port, directory = free_port(), workdir / f"nginx-{tree.name}"
    directory.mkdir()
    directory.chmod(0o755)  # run as root, nginx's workers are `nobody` and keep their temp files here
    conf = directory / "nginx.conf"
    conf.write_text(nginx_config(upstreams=ports, port=proxy_port, directory=directory))
    command = ["/usr/sbin/nginx", "-p", str(directory), "-c", str(conf), "-e", str(directory / "error.log")]
    servers.append(subprocess.Popen([*command, "-g", f"pid {directory}/nginx.pid; daemon off;"]))
    wait_for(f"http://127.0.0.1:{proxy_port}/healthz", servers)
    return servers, f"http://127.0.0.1:{proxy_port}"


def wait_for(url: str, servers: list) -> None:
    for _ in range(300):
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    stop(servers)
    raise SystemExit(f"{url} did not come up")


def tree_cpu_seconds(pids: list[int]) -> float:
    """CPU seconds (user + system) of these processes and every descendant alive now, from /proc (Linux)."""
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            pid = int(stat.parent.name)
            parents[pid], ticks[pid] = int(fields[1]), int(fields[11]) + int(fields[12])
    wanted, total = set(pids), 0
    for pid in ticks:
        ancestor = pid
        while ancestor and ancestor not in wanted:
            ancestor = parents.get(ancestor, 0)
        if ancestor:
            total += ticks[pid]
    return total / os.sysconf("SC_CLK_TCK")


def stop(servers: list) -> None:
    for server in reversed(servers):
        server.terminate()
        server.wait(timeout=30)


# The load ------------------------------------------------------------------------------------------------
_TLS = ssl.create_default_context()  # one CA load for every client (see harness.new_client)


async def request(client, tally: Tally, method: str, url: str, expect: tuple[int, ...], **kw) -> httpx.Response:
    started = time.perf_counter()
    try:
        response = await client.request(method, url, **kw)
    except httpx.HTTPError as exc:
        tally.errors[f"{method} {type(exc).__name__}"] += 1
        raise Failed(url) from exc
    tally.requests += 1
    tally.samples.append(time.perf_counter() - started)
    if response.status_code not in expect:
        tally.errors[f"{method} {url.split('?')[0].rstrip('/').rsplit('/', 1)[-1]} {response.status_code}"] += 1
        raise Failed(url)
    return response


async def form(client, tally: Tally, url: str, data: dict) -> str:
    page = await request(client, tally, "GET", url, (200,))
    token = CSRF.search(page.text).group(1)
    sent = await request(client, tally, "POST", url, (302,), data={**data, "csrfmiddlewaretoken": token})
    return sent.headers["location"]


async def one_judge(base: str, tally: Tally, number: int) -> str:
    """link -> consent -> demographics -> k pairs -> attention check -> completion; 'completed' or 'full'."""
    link = f"/s/{SLUG}/?PROLIFIC_PID={number:024x}&STUDY_ID={'b' * 24}&SESSION_ID={number + 1:024x}"
    async with httpx.AsyncClient(base_url=base, verify=_TLS, timeout=120) as client:
        url = (await request(client, tally, "GET", link, (302,))).headers["location"]
        if not url.endswith("/done/"):  # a full study sends a new arrival straight to its page
            url = await form(client, tally, url, {"consent": "yes", "anonymised": "yes"})
            url = await form(client, tally, url, DEMOGRAPHICS)
        while "/pair/" in url:
            picks = {key: random.choice(["first", "second"]) for key in QUESTION_KEYS}
            picks[QUESTION_KEYS[0]], picks[QUESTION_KEYS[1]] = "first", "second"  # never a straight line
            url = await form(client, tally, url, picks)
            tally.acknowledged += 1
        if url.endswith("/done/"):
            done = await request(client, tally, "GET", url, (200,))
            if "the study is full" in done.text:
                return "full"
            raise Failed("done before judging")
        url = await form(client, tally, url, {"choice": "2"})
        page = await request(client, tally, "GET", url, (200,))
        match = CODE.search(page.text)
        if not match or match.group(1) != "BENCHOK":
            tally.errors["no completion code"] += 1
            raise Failed("no completion code")
        return "completed"


async def run_load(concurrency: int, jobs: int, work) -> float:
    """`jobs` calls of work(number), `concurrency` at a time; returns the wall time."""
    numbers = iter(range(jobs))

    async def worker():
        for number in numbers:
            with contextlib.suppress(Failed):  # counted in the tally; the next judge goes on
                await work(number)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return time.perf_counter() - started


async def burst(base: str, *, judges: int, concurrency: int, healthz: int, meters: dict) -> dict:
    """The /healthz baseline, then the judges; walls, tallies and each meter's CPU seconds in each phase."""

    def server_cpu() -> Counter:
        return Counter({name: meter() for name, meter in meters.items()})

    health = Tally()

    async def healthz_client(_):
        async with httpx.AsyncClient(base_url=base, verify=_TLS, timeout=120) as client:
            for _ in range(10):
                await request(client, health, "GET", "/healthz", (200,))

    await run_load(concurrency, concurrency, healthz_client)  # warm every worker and thread
    health, cpu = Tally(), server_cpu()
    health_wall = await run_load(concurrency, max(concurrency, healthz // 10), healthz_client)
    health_cpu, cpu = server_cpu() - cpu, server_cpu()
    tally, client_cpu = Tally(), time.process_time()

    async def judge(number):
        tally.outcomes[await one_judge(base, tally, number)] += 1

    wall = await run_load(concurrency, judges, judge)
    return {
        "tally": tally,
        "wall": wall,
        "health": health,
        "health_wall": health_wall,
        "health_cpu": health_cpu,
        "judges_cpu": server_cpu() - cpu,
        "client_cpu": time.process_time() - client_cpu,
    }


# Checks --------------------------------------------------------------------------------------------------
def database_checks(url: str, tally: Tally) -> dict:
    stored, completed = sql(
        url,
        """SELECT (SELECT count(*) FROM surveys_judgment j JOIN surveys_assignment a ON a.id = j.assignment_id
                   JOIN surveys_participant p ON p.id = a.participant_id JOIN surveys_study s ON s.id = p.study_id
                   WHERE s.slug = %(slug)s),
                  (SELECT count(*) FROM surveys_participant p JOIN surveys_study s ON s.id = p.study_id
                   WHERE s.slug = %(slug)s AND p.status = 'completed')""",
        {"slug": SLUG},
    )[0]
    over, judged_over, reserved, short = sql(
        url,
        """SELECT count(*) FILTER (WHERE c.completed + c.reserved > c.target),
                  count(*) FILTER (WHERE judged.n > c.target),
                  coalesce(sum(c.reserved), 0), coalesce(sum(c.target - c.completed - c.reserved), 0)
           FROM surveys_cell c JOIN surveys_study s ON s.id = c.study_id
           LEFT JOIN (SELECT a.cell_id, count(DISTINCT a.id) AS n FROM surveys_assignment a
                      JOIN surveys_judgment j ON j.assignment_id = a.id GROUP BY a.cell_id) judged
                  ON judged.cell_id = c.id
           WHERE s.slug = %(slug)s""",
        {"slug": SLUG},
    )[0]
    acknowledged = tally.acknowledged * len(QUESTION_KEYS)
    return {
        "completed in the database": completed,
        "judgments acknowledged": acknowledged,
        "stored": stored,
        "lost": acknowledged - stored,
        "cells over target (completed + reserved)": over,
        "cells judged by more assignments than the target": judged_over,
        "reservations left": reserved,
        "places left": short,
    }


def measure(tree: Path, args, workdir: Path, label: str) -> dict:
    name = f"{args.database}_{label}"
    env = server_env(fresh_database(args.postgres, name))
    repetitions = prepare_database(tree, env, judges=args.judges_of(label), k=args.k, workdir=workdir)
    dockerfile_tree = ROOT if args.baseline_command == "this" else None
    servers, base = start_servers(
        tree, env, processes=args.web_processes, nginx=args.nginx, workdir=workdir, dockerfile_tree=dockerfile_tree
    )
    gunicorns = [server.pid for server in servers[: args.web_processes]]  # not nginx: the same for both trees
    try:
        run = asyncio.run(
            burst(
                base,
                judges=args.judges_of(label),
                concurrency=args.concurrency,
                healthz=args.healthz_requests,
                meters={"server": lambda: tree_cpu_seconds(gunicorns)},
            )
        )
    finally:
        stop(servers)
    tally, wall, health = run["tally"], run["wall"], run["health"]
    completed = max(1, tally.outcomes["completed"])
    checks = database_checks(env["DATABASE_URL"], tally)
    if not args.keep:
        drop_database(args.postgres, name)
    return {
        "label": label,
        "tree": str(tree),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True
        ).stdout.strip(),
        "command": shlex.join(dockerfile_command(tree, 0, dockerfile_tree)[1:-2]),
        "R": repetitions,
        "judges": args.judges_of(label),
        "completed": tally.outcomes["completed"],
        "full": tally.outcomes["full"],
        "errors": sum(tally.errors.values()),
        "error kinds": dict(tally.errors.most_common(5)),
        "requests": tally.requests,
        "wall": wall,
        "judges/s": tally.outcomes["completed"] / wall,
        "requests/s": tally.requests / wall,
        "request p95 ms": p95(tally.samples) * 1000 if tally.samples else 0.0,
        "healthz/s": health.requests / run["health_wall"],
        # CPU time, not wall: other work on the machine moves it far less (and the load generator's own).
        "server CPU ms per judge": run["judges_cpu"]["server"] / completed * 1000,
        "server CPU ms per /healthz": run["health_cpu"]["server"] / max(1, health.requests) * 1000,
        "client CPU ms per judge": run["client_cpu"] / completed * 1000,
        **checks,
    }


def print_result(result: dict) -> None:
    print(f"\n[{result['label']}] {result['tree']} at {result['commit']}: {result['command']}")
    print(
        f"  study: 250 cells, R={result['R']}: room for {result['R'] * 250 // 5} judges of k=5; "
        f"{result['judges']} judges sent, {result['completed']} completed, {result['full']} saw 'study is full', "
        f"errors {result['errors']} {result['error kinds'] or ''}"
    )
    print(
        f"  {result['requests']} requests in {result['wall']:.1f} s: {result['judges/s']:.2f} judges/s, "
        f"{result['requests/s']:.0f} requests/s (p95 {result['request p95 ms']:.0f} ms); "
        f"/healthz alone {result['healthz/s']:.0f} requests/s"
    )
    per_healthz = result["server CPU ms per judge"] / max(result["server CPU ms per /healthz"], 1e-9)
    print(
        f"  server CPU per judge {result['server CPU ms per judge']:.1f} ms = {per_healthz:.0f}x a /healthz request's "
        f"({result['server CPU ms per /healthz']:.2f} ms); the load generator's {result['client CPU ms per judge']:.1f} ms"
    )
    skip = {"label", "tree", "commit", "command", "R", "judges", "completed", "full", "errors", "error kinds"}
    skip |= {"requests", "wall", "judges/s", "requests/s", "request p95 ms", "healthz/s"}
    skip |= {"server CPU ms per judge", "server CPU ms per /healthz", "client CPU ms per judge"}
    print("  database: " + ", ".join(f"{key} {value}" for key, value in result.items() if key not in skip))


def failures(result: dict) -> list[str]:
    wanted = {"errors": 0, "lost": 0, "cells over target (completed + reserved)": 0}
    wanted["cells judged by more assignments than the target"] = 0
    found = [f"{key} {result[key]}" for key, value in wanted.items() if result[key] != value]
    if result["completed in the database"] != result["completed"]:
        found.append(f"completed {result['completed']} but {result['completed in the database']} in the database")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--k", type=int, default=5, help="pairs per judge")
    parser.add_argument("--baseline-tree", type=Path, help="a checkout of the commit to compare with (git worktree)")
    parser.add_argument(
        "--baseline-command",
        choices=["own", "this"],
        default="own",
        help="the gunicorn command the baseline runs: its own Dockerfile's (today's deployment) or this tree's "
        "(the code alone compared)",
    )
    parser.add_argument("--baseline-judges", type=int, help="judges sent to the baseline (default: --judges)")
    parser.add_argument("--healthz-requests", type=int, default=4000)
    parser.add_argument("--web-processes", type=int, default=1, help="gunicorn processes, each on a port of its own")
    parser.add_argument("--nginx", action="store_true", help="every request through nginx (deploy/nginx.conf)")
    parser.add_argument("--postgres", default=os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432"))
    parser.add_argument("--database", default="mj_burst")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark databases afterwards")
    args = parser.parse_args()
    if args.web_processes > 1 and not args.nginx:
        parser.error("--web-processes above 1 needs --nginx in front of them")
    args.judges_of = lambda label: args.baseline_judges or args.judges if label == "baseline" else args.judges
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    shape = f"{args.web_processes} gunicorn process(es)" + (" behind nginx" if args.nginx else "")
    print(f"{args.judges} judges at concurrency {args.concurrency} through {shape}, PostgreSQL, DEBUG off")
    workdir = Path(tempfile.mkdtemp(prefix="mj-burst-"))
    results = []
    try:
        trees = ([("baseline", args.baseline_tree.resolve())] if args.baseline_tree else []) + [("new", ROOT)]
        for label, tree in trees:
            results.append(measure(tree, args, workdir, label))
            print_result(results[-1])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if len(results) == 2 and results[0]["judges/s"] and results[0]["requests/s"]:
        old, new = results
        print(
            f"new / baseline: judges/s {new['judges/s'] / old['judges/s']:.2f}x, "
            f"requests/s {new['requests/s'] / old['requests/s']:.2f}x, "
            f"/healthz requests/s {new['healthz/s'] / old['healthz/s']:.2f}x; "
            f"server CPU per judge {new['server CPU ms per judge'] / old['server CPU ms per judge']:.2f}x"
        )
    failed = failures(results[-1])
    print("guarantees: " + ("ok (0 errors, 0 lost, 0 over target)" if not failed else "FAILED: " + "; ".join(failed)))
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
