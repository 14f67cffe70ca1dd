"""LLM judging under provider rate limits: the method's second experiment, 336 cells x 2 orders x 2 judges.

8 systems (28 pairs) x 12 vignettes = 336 cells, each judged in both display orders by two judge models = 1,344
calls. Each judge has its own fake provider on 127.0.0.1 (tests/fakes/llm_servers.py) answering after LATENCY
and enforcing RPM requests a minute (GCRA, tolerance PROVIDER_BURST); a request that comes too early gets 429
with Retry-After. 672 calls per provider cannot finish sooner than (672 - burst) * 60 / RPM + latency: that floor
is the baseline. Prints elapsed / floor (goal <= 1.2), duplicate judgments stored (goal 0) and the calls paid
beyond one per item (goal 0: each item's one successful call; 429s are refused before any work and cost nothing).

Run:
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/mj_bench REDIS_URL=redis://127.0.0.1:6379/5 \\
      .venv/bin/python benchmarks/judge.py [--workers 2 --threads 8] [--rpm 1200] [--systems 8 --vignettes 12]
A smaller design (e.g. --systems 6 --vignettes 8 --rpm 600) is less at the mercy of a loaded machine; the worker
CPU a call it prints is the figure least moved by others' load.
With REDIS_URL and a PostgreSQL DATABASE_URL it runs real Celery worker processes (threads pool); otherwise
in-process threads with the in-process limiter. The output says which.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("LLM_ALLOWED_HOSTS", "127.0.0.1")  # the fake providers (llm_collect/keys.py)

JUDGES = [("gpt-5-mini", "openai", "gpt-5-mini"), ("claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5")]
SYSTEMS, VIGNETTES, LATENCY, PROVIDER_BURST = 8, 12, 0.2, 2


def build_study(systems_count: int = SYSTEMS, vignettes: int = VIGNETTES):
    from surveys.services.lifecycle import go_live
    from tests.conftest import make_study

    slug = f"bench-judge-{uuid.uuid4().hex[:8]}"
    systems = tuple(f"s{k}" for k in range(systems_count))
    study = make_study(slug=slug, systems=systems, vignettes=vignettes, reference="s0", repetitions=1)
    return go_live(study=study)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes (Redis mode)")
    parser.add_argument("--threads", type=int, default=8, help="threads per worker (or in-process threads)")
    parser.add_argument("--rpm", type=int, default=1200, help="requests a minute each fake provider allows")
    parser.add_argument("--systems", type=int, default=SYSTEMS, help="a smaller design for a loaded machine")
    parser.add_argument("--vignettes", type=int, default=VIGNETTES)
    args = parser.parse_args()
    from collect import ensure_database, run_celery_workers

    ensure_database()
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db.models import Count

    from llm_judging.models import JudgeCall, JudgeModel
    from llm_judging.services import calling, runs
    from tests.fakes.llm_servers import FakeLLMServer

    call_command("migrate", verbosity=0)
    os.environ["BENCH_LLM_API_KEY"] = "sk-bench"
    on_postgres = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    celery_mode = bool(settings.REDIS_URL) and on_postgres
    servers = [
        FakeLLMServer(latency=LATENCY, requests_per_minute=args.rpm, burst=PROVIDER_BURST).start() for _ in JUDGES
    ]
    study = build_study(args.systems, args.vignettes)
    tag = uuid.uuid4().hex[:6]
    judges = [
        JudgeModel.objects.create(
            study=study,
            key=f"{key}-{tag}",
            provider=provider,
            model=model,
            base_url=server.url,
            api_key_env="BENCH_LLM_API_KEY",
            parameters={"requests_per_minute": args.rpm, "burst": 1, "concurrency": 8},
        )
        for (key, provider, model), server in zip(JUDGES, servers, strict=True)
    ]
    queue = f"bench-{tag}"
    settings.LLM_CALLS = {**getattr(settings, "LLM_CALLS", {}), "queue": queue}
    cells = study.cells.count()
    total = cells * 2 * len(judges)
    stop, workers = threading.Event(), []
    if celery_mode:
        mode = f"real Celery workers: {args.workers} processes x {args.threads} threads, Redis, PostgreSQL"
        workers = run_celery_workers(args.workers, args.threads, queue)
        wait_until_ready(len(workers))
    else:
        settings.CELERY_TASK_ALWAYS_EAGER = False
        mode = f"in-process: {args.threads} threads, in-process limiter, {settings.DATABASES['default']['ENGINE']}"
    print(f"mode: {mode}")
    print(f"workload: {cells} cells x 2 orders x {len(judges)} judges = {total} calls; "
          f"fake providers: {LATENCY * 1000:.0f} ms latency, {args.rpm} requests/minute each")  # fmt: skip
    booted_cpu = sum(cpu_seconds(worker.pid) for worker in workers)
    started = time.monotonic()
    if celery_mode:
        run = runs.start_judging_run(study=study, judges=judges)
    else:
        runs.queue = lambda ids: None  # the threads below play Celery's part
        run = runs.start_judging_run(study=study, judges=judges)
        run_in_process(
            list(JudgeCall.objects.filter(run=run).values_list("pk", flat=True)), args.threads, stop, calling
        )
    finished = JudgeCall.objects.filter(run=run).exclude(status__in=["pending", "running"])
    deadline = started + 900
    while finished.count() < total and time.monotonic() < deadline:
        time.sleep(0.5)
    elapsed = time.monotonic() - started
    worker_cpu = sum(cpu_seconds(worker.pid) for worker in workers) - booted_cpu
    stop.set()
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.wait(timeout=60)
    for server in servers:
        server.stop()

    per_provider = total // len(judges)
    floor = (per_provider - PROVIDER_BURST) * 60 / args.rpm + LATENCY
    statuses = dict(JudgeCall.objects.filter(run=run).values_list("status").annotate(n=Count("id")))
    calls = JudgeCall.objects.filter(run=run)
    duplicates = calls.count() - calls.values("judge", "cell", "order", "sample").distinct().count()
    served_ok = sum(s.served for s in servers)
    print(f"judge calls by status: {statuses}")
    print(f"least time the limits allow: {floor:.1f} s ({per_provider} calls per provider at {args.rpm}/min)")
    print(f"elapsed: {elapsed:.1f} s")
    print(f"elapsed / least time: {elapsed / floor:.3f} (goal <= 1.2)")
    print(f"duplicates stored: {duplicates} (goal 0)")
    print(f"provider calls answered: {served_ok} for {total} items (paid beyond one per item: {served_ok - total})")
    print(f"429s sent by the fake providers: {sum(s.rejected for s in servers)}")
    if workers:
        print(f"worker CPU: {worker_cpu:.1f} s, {worker_cpu / total * 1000:.0f} ms a call (less sensitive to load)")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (Linux /proc), 0 where unreadable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_until_ready(n_workers: int, *, limit: float = 120) -> None:
    """Start the clock when every worker answers a ping: a fixed 4 s sleep was too short on a loaded machine,
    and the workers' boot (Django setup, imports) then counted as judging time."""
    from moraljudge.celery import app

    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if len(app.control.ping(timeout=0.5)) >= n_workers:
            return
    print(f"warning: not all {n_workers} workers answered within {limit:.0f} s")


def run_in_process(ids, threads, stop, calling):
    """Celery's part played by threads: run each id, and schedule it again after TryAgain's delay."""
    import heapq

    from django.db import connection

    from llm_collect.calls import TryAgain

    heap = [(0.0, i, cid, 0) for i, cid in enumerate(ids)]
    heapq.heapify(heap)
    lock, counter = threading.Lock(), [len(ids)]

    def worker():
        while not stop.is_set():
            with lock:
                item = heapq.heappop(heap) if heap and heap[0][0] <= time.monotonic() else None
            if item is None:
                time.sleep(0.02)
                continue
            _, _, cid, retries = item
            try:
                calling.judge_item(call_id=cid, retries=retries)
            except TryAgain as exc:
                with lock:
                    counter[0] += 1
                    heapq.heappush(heap, (time.monotonic() + exc.delay, counter[0], cid, retries + 1))
        connection.close()

    for _ in range(threads):
        threading.Thread(target=worker, daemon=True).start()


if __name__ == "__main__":
    main()
