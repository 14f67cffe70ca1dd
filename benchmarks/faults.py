"""Faults under load: does any judgment or paid LLM answer get lost when a part of the stack fails?

Run: `python benchmarks/faults.py [--quick] [--keep]`. On this machine it starts, all its own:
a throwaway PostgreSQL database (`mj_faults`, dropped afterwards) behind a TCP proxy the script runs (the
app's DATABASE_URL points at the proxy, so an outage touches no other user of the server); a Redis server on
a free port (append-only file, as compose's; the machine's Redis is not used); gunicorn with 3 sync workers
and DEBUG off; a Celery worker as compose starts it (prefork, concurrency 4) and celery beat; and fake LLM
providers (tests/fakes/llm_servers.py: OpenAI, Anthropic, Gemini and OpenAI-compatible wire formats, each
call taking LATENCY seconds).

Then, phase by phase, a wave of simulated judges (benchmarks/harness.py; a judge who meets a broken page waits
and loads it again, as a participant would) and an LLM collection (`manage.py collect_answers`) run together,
each on a study of their own, and one fault is injected a few seconds in: none (the control), a gunicorn worker
killed (-9), the app's database connections terminated (pg_terminate_backend), the database unreachable for
5 s (the proxy drops every connection and refuses new ones), Redis stopped and started again, the Celery
worker killed (-9, the whole process group) and a new one started 5 s later.

Printed per fault: requests that failed (what participants saw), judges who gave up, judging pages the server
acknowledged against judgments stored (lost = acknowledged but not stored), cells over target, orphan
reservations (a cell's reserved counter above the assignments holding it), generations still pending or
running 60 s after the fault ended, and provider calls paid beyond one per sample, beside the calls that were
in flight at the fault. Target: 0 lost, 0 over target, 0 orphans, 0 stranded, paid twice <= in flight.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import contextlib

from harness import (
    PYTHON,
    QUESTION_KEYS,
    ROOT,
    Patience,
    Recorder,
    drop_database,
    free_port,
    fresh_database,
    import_study_file,
    judge,
    judging_study_file,
    run_pool,
    server_env,
    setup_django,
    start_gunicorn,
)

LATENCY = 1.5  # seconds per fake provider call: long enough for calls to be in flight at a fault
STRANDED_AFTER = 60  # seconds after a fault ends by which every generation should be finished
LLM_KEY_ENV = "FAULTS_LLM_API_KEY"
PROVIDERS = [("openai", "gpt-4o"), ("anthropic", "claude-3-7-sonnet-20250219"), ("gemini", "gemini-1.5-flash")]
PROVIDERS += [("openai-compatible", "llama-3.3-70b")]
FAULTS = {  # --only's name: the label printed
    "none": "none (control)",
    "web-worker": "web worker killed",
    "db-connections": "db connections terminated",
    "db-outage": "db outage 5 s",
    "redis": "redis restarted",
    "celery-worker": "celery worker killed",
}


# The parts of the stack the script starts --------------------------------------------------------------------
class TcpProxy:
    """127.0.0.1:port -> target, one thread per direction; `outage` drops every connection and refuses new ones."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.down = threading.Event()
        self.lock = threading.Lock()
        self.open: set[socket.socket] = set()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        while True:
            client, _ = self.listener.accept()
            if self.down.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.open |= {client, upstream}
            threading.Thread(target=self.pump, args=(client, upstream), daemon=True).start()
            threading.Thread(target=self.pump, args=(upstream, client), daemon=True).start()

    def pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            self.cut(source, sink)

    def cut(self, *sockets: socket.socket) -> None:
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            with self.lock:
                self.open.discard(sock)

    def outage(self, seconds: float) -> None:
        self.down.set()
        with self.lock:
            dropped = list(self.open)
        self.cut(*dropped)
        time.sleep(seconds)
        self.down.clear()


class RedisServer:
    """A redis-server of the script's own on a free port; its append-only file survives a restart."""

    def __init__(self, directory: Path):
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory)]
        command += ["--appendonly", "yes", "--save", "", "--loglevel", "warning"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("redis-server did not come up")

    def stop(self) -> None:
        self.process.terminate()  # SIGTERM: Redis writes its append-only file and exits, as `docker stop` does
        self.process.wait(timeout=30)


class CeleryWorker:
    """`celery -A moraljudge worker --concurrency=4` as compose runs it, in a process group of its own."""

    def __init__(self, env: dict, log_dir: Path, name: str, beat: bool = False):
        args = ["beat", "-l", "WARNING"] if beat else ["worker", "--concurrency=4", "-l", "INFO", "-n", f"{name}@%h"]
        self.log = log_dir / f"{name}.log"
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                [PYTHON, "-m", "celery", "-A", "moraljudge", *args],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        if not beat:
            self.wait_ready()

    def wait_ready(self) -> None:
        for _ in range(300):
            if " ready." in self.log.read_text(errors="replace"):
                return
            time.sleep(0.1)
        raise SystemExit(f"celery worker did not come up (see {self.log})")

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)  # the main process and its pool children, no goodbye
        self.process.wait()

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def busy_worker(master: int, port: int, wait: float = 3.0) -> int:
    """A gunicorn worker in the middle of a request (it holds an established connection on the port), else any."""
    workers = children_of(master)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        established = set()
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                established.add(f"socket:[{fields[9]}]")
        for pid in workers:
            try:
                if any(os.readlink(fd) in established for fd in Path(f"/proc/{pid}/fd").iterdir()):
                    return pid
            except OSError:
                continue
        time.sleep(0.01)
    return random.choice(workers)


def fake_providers(count: int):
    from tests.fakes.llm_servers import FakeLLMServer

    class CountingServer(FakeLLMServer):
        """The tests' fake provider, also counting the calls it is in the middle of answering."""

        in_flight = 0

        def handle(self, handler):
            with self.lock:
                self.in_flight += 1
            try:
                super().handle(handler)
            finally:
                with self.lock:
                    self.in_flight -= 1

    return [CountingServer(latency=LATENCY).start() for _ in range(count)]


# One phase: a wave of judges and a collection, and one fault -------------------------------------------------
@dataclass
class Phase:
    fault: str
    failures: list[str] = field(default_factory=list)
    gave_up: int = 0
    acknowledged: int = 0
    stored: int = 0
    lost: int = 0
    over_target: int = 0
    orphans: int = 0
    stranded: int = 0
    paid_beyond: int = 0
    in_flight: int = 0
    note: str = ""
    collection: str = ""


def llm_study_file(slug: str, servers, vignettes: int) -> dict:
    systems = [
        {
            "key": f"llm{i}",
            "label": f"{provider} {model}",
            "kind": "llm",
            "provider": provider,
            "model": model,
            "base_url": server.url,
            "api_key_env": LLM_KEY_ENV,
            "parameters": {"requests_per_minute": 6000, "burst": 10, "concurrency": 4},
        }
        for i, ((provider, model), server) in enumerate(zip(PROVIDERS, servers, strict=True))
    ]
    return {
        "slug": slug,
        "name": f"Benchmark {slug}",
        "reference_system": "llm0",
        "questions": [{"key": key, "text": key} for key in QUESTION_KEYS],
        "systems": systems,
        "vignettes": [{"key": f"v{n}", "character": f"Sam{n}", "text": f"Story {n}."} for n in range(1, vignettes + 1)],
    }


def run_phase(number: int, fault: str, stack: Stack, args) -> Phase:
    from django.core.management import call_command
    from django.db.models import Count, F, Q

    from llm_collect.models import Generation
    from surveys.models import Cell, Judgment, Participant, Study

    phase = Phase(FAULTS[fault])
    slug = f"faults-{number}"
    import_study_file(
        judging_study_file(
            slug=slug, systems=args.systems, vignettes=args.vignettes, repetitions=args.repetitions, k=args.k
        ),
        stack.tmp,
    )
    servers = fake_providers(len(PROVIDERS))
    stack.servers += servers
    import_study_file(llm_study_file(f"{slug}-llm", servers, args.llm_vignettes), stack.tmp)
    questions = list(Study.objects.get(slug=slug).questions.values_list("key", flat=True))

    rec = Recorder()
    patience = Patience(tries=args.patience, pause=0.5)
    wave: dict = {}

    def judges():
        first = number * 100_000
        wave["outcomes"], wave["errors"], _ = run_pool(
            args.concurrency,
            range(first, first + args.judges),
            lambda n: judge(rec, stack.base, slug, n, questions, patience=patience, think=args.think),
        )

    wave_thread = threading.Thread(target=judges)
    wave_thread.start()
    call_command("collect_answers", f"{slug}-llm", samples=args.samples, stdout=open(os.devnull, "w"))  # noqa: SIM115
    time.sleep(args.fault_at)
    in_flight = lambda: sum(server.in_flight for server in servers)  # noqa: E731
    waited = time.monotonic() + 3
    while not in_flight() and time.monotonic() < waited:  # strike while the worker is waiting on a provider
        time.sleep(0.01)
    phase.in_flight = in_flight()
    phase.note = stack.inject(fault)
    fault_over = time.monotonic()
    wave_thread.join()

    generations = Generation.objects.filter(vignette__study__slug=f"{slug}-llm")
    while generations.unfinished().exists() and time.monotonic() < fault_over + STRANDED_AFTER:
        time.sleep(1)
    phase.stranded = generations.unfinished().count()
    # A sample asked at least once has attempts >= 1 (a claim that died before its call counts too, so the
    # difference can come out below the truth, never above it).
    asked = generations.filter(attempts__gte=1).count()
    served = sum(server.served for server in servers)
    phase.paid_beyond = max(0, served - asked)
    done = generations.filter(status="done").count()
    phase.collection = f"{served} calls answered, {asked} samples asked, {done} of {generations.count()} done"

    phase.failures = rec.failures
    phase.gave_up = len(wave["errors"])
    stored = dict(
        Participant.objects.filter(study__slug=slug)
        .annotate(n=Count("assignments__judgments"))
        .values_list("prolific_pid", "n")
    )
    phase.acknowledged = sum(rec.acknowledged.values()) * len(questions)
    phase.stored = Judgment.objects.filter(question__study__slug=slug).count()
    phase.lost = sum(max(0, pages * len(questions) - stored.get(pid, 0)) for pid, pages in rec.acknowledged.items())
    cells = Cell.objects.filter(study__slug=slug)
    phase.over_target = cells.filter(completed__gt=F("target") - F("reserved")).count()
    holders = Count("assignments", filter=Q(assignments__status="reserved", assignments__counts_toward_cell=True))
    phase.orphans = sum(
        max(0, reserved - held) for reserved, held in cells.annotate(held=holders).values_list("reserved", "held")
    )
    return phase


class Stack:
    """Everything the script starts, and the faults it can inject into it."""

    def __init__(self, args):
        self.args = args
        self.tmp = Path(tempfile.mkdtemp(prefix="mj-faults-"))
        self.servers: list = []
        self.workers: list[CeleryWorker] = []
        self.web = self.beat = self.redis = None
        self.admin_url = f"{args.postgres}/postgres"

    def start(self) -> None:
        args = self.args
        direct_url = fresh_database(args.postgres, args.database)
        self.redis = RedisServer(self.tmp)
        self.redis.start()
        host, port = args.postgres.rsplit("@", 1)[1].rsplit(":", 1)
        self.proxy = TcpProxy((host, int(port)))
        proxied = f"{args.postgres.rsplit(':', 1)[0]}:{self.proxy.port}/{args.database}"
        setup_django(server_env(direct_url, self.redis.url) | {LLM_KEY_ENV: "sk-faults"})  # the researcher's shell
        app = {LLM_KEY_ENV: "sk-faults", "REFIT_CRON": "0 0 1 1 *"}  # no nightly refit in the middle of a run
        self.web_env = server_env(f"{proxied}?application_name=mj-faults-web", self.redis.url) | app
        self.worker_env = server_env(f"{proxied}?application_name=mj-faults-worker", self.redis.url) | app
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        with open(self.tmp / "gunicorn.log", "w") as log:
            self.web = start_gunicorn(self.web_env, workers=3, port=self.port, log=log)
        self.workers.append(CeleryWorker(self.worker_env, self.tmp, "faults1"))
        self.beat = CeleryWorker(self.worker_env, self.tmp, "beat", beat=True)

    def inject(self, fault: str) -> str:
        if fault == "web-worker":
            victim = busy_worker(self.web.pid, self.port)
            os.kill(victim, signal.SIGKILL)
            return f"killed gunicorn worker {victim}"
        if fault == "db-connections":
            import psycopg

            with psycopg.connect(self.admin_url, autocommit=True) as conn:
                rows = conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND application_name LIKE 'mj-faults-%%'",
                    [self.args.database],
                ).fetchall()
            return f"terminated {len(rows)} connections"
        if fault == "db-outage":
            self.proxy.outage(5)
            return "proxy down 5 s"
        if fault == "redis":
            self.redis.stop()
            time.sleep(5)
            self.redis.start()
            return "redis down 5 s"
        if fault == "celery-worker":
            self.workers[-1].kill()
            time.sleep(5)
            self.workers.append(CeleryWorker(self.worker_env, self.tmp, f"faults{len(self.workers) + 1}"))
            return "worker killed, new one 5 s later"
        return ""

    def stop(self) -> None:
        for part in [*self.workers, self.beat]:
            if part:
                part.stop()
        if self.web:
            self.web.terminate()
            self.web.wait(timeout=30)
        if self.redis and self.redis.process:
            self.redis.stop()
        for server in self.servers:
            server.stop()
        from django.db import connections

        connections.close_all()
        if not self.args.keep:
            drop_database(self.args.postgres, self.args.database)
            shutil.rmtree(self.tmp, ignore_errors=True)


def report(phases: list[Phase], args) -> None:
    print(
        f"\nper phase: {args.judges} judges ({args.concurrency} at a time) on {args.systems} systems x "
        f"{args.vignettes} vignettes, R={args.repetitions}, k={args.k}; collection {len(PROVIDERS)} models x "
        f"{args.llm_vignettes} vignettes x {args.samples} samples, {LATENCY} s a call; fault {args.fault_at} s in"
    )
    header = ["fault", "failed requests", "gave up", "judgments acked / stored", "lost", "over target"]
    header += ["orphan reservations", f"stranded after {STRANDED_AFTER} s", "paid beyond 1/sample (in flight)"]
    print(" | ".join(header))
    for p in phases:
        row = [p.fault, str(len(p.failures)), str(p.gave_up), f"{p.acknowledged} / {p.stored}", str(p.lost)]
        row += [str(p.over_target), str(p.orphans), str(p.stranded), f"{p.paid_beyond} ({p.in_flight})"]
        print(" | ".join(row))
    for p in phases:
        kinds = ", ".join(f"{what} x{n}" for what, n in Counter(p.failures).most_common(4))
        print(f"  {p.fault}: {p.note or 'no fault'}; collection: {p.collection}{'; failed: ' + kinds if kinds else ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run: fewer judges and generations per phase")
    parser.add_argument("--judges", type=int, help="judges per phase (default 60, quick 24)")
    parser.add_argument("--concurrency", type=int, default=8, help="judges at a time")
    parser.add_argument("--think", type=float, default=0.25, help="seconds a judge spends before each answer")
    parser.add_argument("--patience", type=int, default=30, help="loads of a broken page before a judge gives up")
    parser.add_argument("--fault-at", type=float, default=5.0, help="seconds into each phase the fault comes")
    parser.add_argument("--only", action="append", choices=list(FAULTS), help="run only this fault (repeatable)")
    parser.add_argument("--postgres", default=os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432"))
    parser.add_argument("--database", default="mj_faults")
    parser.add_argument("--keep", action="store_true", help="keep the database and the logs afterwards")
    args = parser.parse_args()
    size = dict(judges=24, systems=4, vignettes=4, repetitions=2, k=3, llm_vignettes=4, samples=2)
    if not args.quick:
        size = dict(judges=60, systems=4, vignettes=6, repetitions=4, k=3, llm_vignettes=6, samples=3)
    for name, value in size.items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)
    if not shutil.which("redis-server"):
        raise SystemExit("needs redis-server on PATH (the script starts one of its own)")

    random.seed(10)
    stack = Stack(args)
    phases = []
    try:
        stack.start()
        print(
            f"stack up: gunicorn {stack.base}, proxy :{stack.proxy.port}, redis :{stack.redis.port}, logs {stack.tmp}"
        )
        for number, fault in enumerate(args.only or FAULTS, start=1):
            phases.append(run_phase(number, fault, stack, args))
            print(f"phase {number} done: {FAULTS[fault]}", flush=True)
    finally:
        report(phases, args)
        stack.stop()


if __name__ == "__main__":
    main()
