"""LLM collection under provider rate limits: 6 models x 24 vignettes x 5 samples = 720 calls.

Each model has its own fake provider on 127.0.0.1 (tests/fakes/llm_servers.py) answering after 300 ms and
enforcing 60 requests a minute (GCRA: one a second, with a tolerance of one request for network jitter);
a request that comes too early gets 429 with Retry-After. 120 calls per provider at one a second cannot
finish sooner than (120 - 2) s + 0.3 s = 118.3 s: that floor is the baseline, and the benchmark prints the
elapsed time over it (goal <= 1.2), the duplicates stored (goal 0), the calls paid beyond one per sample and
the 429s the providers had to send.

Run:
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/mj_bench REDIS_URL=redis://127.0.0.1:6379/5 \\
      .venv/bin/python benchmarks/collect.py [--workers 2 --threads 8]
With REDIS_URL and a PostgreSQL DATABASE_URL it runs real Celery worker processes (threads pool) against
them; otherwise in-process threads with the in-process limiter. The output says which.
"""

from __future__ import annotations

import argparse
import heapq
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("LLM_ALLOWED_HOSTS", "127.0.0.1")  # the fake providers (llm_collect/keys.py)

MODELS = [
    ("gpt-5-mini", "openai", "gpt-5-mini"),
    ("o3", "openai", "o3"),
    ("claude", "anthropic", "claude-sonnet-4-5"),
    ("gemini", "gemini", "gemini-2.5-flash"),
    ("deepseek", "openai-compatible", "deepseek-chat"),
    ("llama", "openai-compatible", "llama-3.3-70b"),
]
VIGNETTES, SAMPLES, LATENCY, RPM, PROVIDER_BURST = 24, 5, 0.3, 60, 2


def ensure_database() -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        return
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def build_study(servers):
    from surveys.models import Question, Study, System, Vignette

    slug = f"bench-collect-{uuid.uuid4().hex[:8]}"
    study = Study.objects.create(slug=slug, name="Collection benchmark")
    for position, key in enumerate(["features", "weighting", "reasons", "conclusion", "additional_info"]):
        Question.objects.create(study=study, key=key, text=key, position=position)
    for n in range(1, VIGNETTES + 1):
        Vignette.objects.create(study=study, key=f"v{n}", character=f"Sam{n}", text=f"Story {n}.", position=n)
    for position, ((key, provider, model), server) in enumerate(zip(MODELS, servers, strict=True)):
        System.objects.create(
            study=study,
            key=key,
            label=key,
            kind="llm",
            provider=provider,
            model=model,
            base_url=server.url,
            api_key_env="BENCH_LLM_API_KEY",
            parameters={"requests_per_minute": RPM, "burst": 1, "concurrency": 4},
            position=position,
        )
    return study


def run_celery_workers(n_workers: int, threads: int, queue: str):
    env = {**os.environ, "BENCH_LLM_API_KEY": "sk-bench"}
    command = [sys.executable, "-m", "celery", "-A", "moraljudge", "worker", "-Q", queue, "-P", "threads"]
    command += ["-c", str(threads), "--without-heartbeat", "--without-gossip", "--without-mingle", "-l", "ERROR"]
    return [
        subprocess.Popen([*command, "-n", f"bench{i}@%h"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL)
        for i in range(n_workers)
    ]


def run_in_process(ids: list[int], threads: int, stop: threading.Event) -> None:
    """Celery's part played by threads: run each id, and schedule it again after TryAgain's delay."""
    from django.db import connection

    from llm_collect import services

    heap = [(0.0, i, gid, 0) for i, gid in enumerate(ids)]
    heapq.heapify(heap)
    lock = threading.Lock()
    counter = [len(ids)]

    def worker():
        while not stop.is_set():
            with lock:
                item = heapq.heappop(heap) if heap and heap[0][0] <= time.monotonic() else None
            if item is None:
                time.sleep(0.02)
                continue
            _, _, gid, retries = item
            try:
                services.collect(generation_id=gid, retries=retries)
            except services.TryAgain as exc:
                delay = exc.delay
                with lock:
                    counter[0] += 1
                    heapq.heappush(heap, (time.monotonic() + delay, counter[0], gid, retries + 1))
        connection.close()

    for _ in range(threads):
        threading.Thread(target=worker, daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2, help="Celery worker processes (Redis mode)")
    parser.add_argument("--threads", type=int, default=8, help="threads per worker (or in-process threads)")
    args = parser.parse_args()
    ensure_database()
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db.models import Count

    from llm_collect import services
    from llm_collect.models import Generation
    from llm_collect.similarity import self_similarity
    from surveys.models import Answer
    from tests.fakes.llm_servers import FakeLLMServer

    call_command("migrate", verbosity=0)
    os.environ["BENCH_LLM_API_KEY"] = "sk-bench"
    on_postgres = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
    celery_mode = bool(settings.REDIS_URL) and on_postgres
    servers = [FakeLLMServer(latency=LATENCY, requests_per_minute=RPM, burst=PROVIDER_BURST).start() for _ in MODELS]
    study = build_study(servers)
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    settings.LLM_CALLS = {**getattr(settings, "LLM_CALLS", {}), "queue": queue}
    total = len(MODELS) * VIGNETTES * SAMPLES
    stop = threading.Event()
    workers = []
    if celery_mode:
        mode = f"real Celery workers: {args.workers} processes x {args.threads} threads, Redis broker and limits, PostgreSQL"
        workers = run_celery_workers(args.workers, args.threads, queue)
        time.sleep(4)  # let the workers connect before the clock starts
    else:
        settings.CELERY_TASK_ALWAYS_EAGER = False
        mode = f"in-process: {args.threads} threads, in-process limiter, {settings.DATABASES['default']['ENGINE']}"
    print(f"mode: {mode}")
    row_creation(study)
    print(
        f"workload: {len(MODELS)} models x {VIGNETTES} vignettes x {SAMPLES} samples = {total} calls; "
        f"fake providers: {LATENCY * 1000:.0f} ms latency, {RPM} requests/minute each"
    )
    started = time.monotonic()
    if celery_mode:
        run = services.start_collection(study=study, samples=SAMPLES)
    else:
        services.runs.queue = lambda ids: None  # the threads below play Celery's part
        run = services.start_collection(study=study, samples=SAMPLES)
        ids = list(
            Generation.objects.filter(run=run)
            .order_by("sample", "vignette__position", "system__position")
            .values_list("pk", flat=True)
        )
        run_in_process(ids, args.threads, stop)
    finished = Generation.objects.filter(run=run).exclude(status__in=["pending", "running"])
    deadline = started + 900
    while finished.count() < total and time.monotonic() < deadline:
        time.sleep(0.5)
    elapsed = time.monotonic() - started
    stop.set()
    for worker in workers:
        worker.terminate()
    for worker in workers:
        worker.wait(timeout=60)
    for server in servers:
        server.stop()

    per_provider = total // len(MODELS)
    floor = (per_provider - PROVIDER_BURST) * 60 / RPM + LATENCY
    statuses = dict(Generation.objects.filter(run=run).values_list("status").annotate(n=Count("id")))
    answers = Answer.objects.for_study(study)
    duplicates = answers.count() - answers.values("system", "vignette", "sample").distinct().count()
    served_ok = sum(s.served for s in servers)
    rejected = sum(s.rejected for s in servers)
    print(f"generations by status: {statuses}")
    print(f"answers stored: {answers.count()} (selected: {answers.filter(selected=True).count()})")
    print(f"least time the limits allow: {floor:.1f} s ({per_provider} calls per provider at {RPM}/min)")
    print(f"elapsed: {elapsed:.1f} s")
    print(f"elapsed / least time: {elapsed / floor:.3f} (goal <= 1.2)")
    print(f"duplicates stored: {duplicates} (goal 0)")
    print(f"provider calls answered: {served_ok} for {total} samples (paid beyond one per sample: {served_ok - total})")
    print(f"429s sent by the fake providers: {rejected}")
    similarity = self_similarity(study=study)
    print("self-similarity (TF-IDF): " + ", ".join(f"{k} {v:.2f}" for k, v in similarity.items()))


def row_creation(study) -> None:
    """The run's rows made in bulk, against one get_or_create per row (how they were made before), each in a
    transaction rolled back afterwards: the same rows, the same database, the same run."""
    from django.db import transaction

    from llm_collect.models import CollectionRun, Generation
    from llm_collect.services.runs import generations_for

    systems, vignettes = list(study.systems.filter(kind="llm")), list(study.vignettes.all())

    def one_by_one(run):
        for sample in range(1, SAMPLES + 1):
            for vignette in vignettes:
                for system in systems:
                    Generation.objects.get_or_create(
                        system=system, vignette=vignette, sample=sample, defaults={"run": run}
                    )

    def timed(make) -> float:
        started = time.perf_counter()
        with transaction.atomic():
            make(CollectionRun.objects.create(study=study, samples=SAMPLES))
            transaction.set_rollback(True)
        return time.perf_counter() - started

    old, new = timed(one_by_one), timed(lambda run: generations_for(run, systems, vignettes, SAMPLES))
    n = len(systems) * len(vignettes) * SAMPLES
    print(f"rows made for {n} calls: one by one {old:.2f} s, in bulk {new:.2f} s (bulk is {old / new:.1f}x faster)")


if __name__ == "__main__":
    main()
