"""The answer-writing survey's cost per page, as ratios to a baseline measured in the same run.

Run standalone: `python benchmarks/answering.py [--respondents 300]` (uses DATABASE_URL, or a temporary
SQLite file). In-process through Django's test client (no network, no server): it measures our handling.

Printed, per request (mean and p95 in ms, and the ratio to the baseline):
- baseline: GET /healthz (one SELECT 1);
- entry from a Prolific link (a new respondent), consent (with the even spread of m = 3 vignettes over
  24), GET of a writing page, POST of an answer (five features), the completion redirect;
- a double submit (the page already saved: nothing written).
Then, on PostgreSQL only, respondents arriving at once in 8 threads: the spread of pages over the
vignettes (max - min, goal <= 1) and the answers stored twice (goal 0).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def setup_django() -> str:
    tmp = tempfile.mkdtemp(prefix="mj-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ["DEBUG"] = "1"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["ENTRY_RATE_LIMIT"] = "off"  # every respondent comes from the same test client
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    call_command("migrate", verbosity=0)
    setup_test_environment()
    return os.environ["DATABASE_URL"]


def row(name: str, samples: list[float], base: float) -> str:
    mean = statistics.fmean(samples)
    p95 = sorted(samples)[int(0.95 * (len(samples) - 1))]
    return f"{name:<36} {len(samples):>6} {mean * 1000:>9.2f} {p95 * 1000:>9.2f} {mean / base:>8.1f}x"


def answer_post(n: int) -> dict:
    data = {"action": f"Do the right thing, {n}.", "additional_information": "Who else knows?"}
    for i, weight in enumerate([40, 25, 15, 10, 10], start=1):
        data |= {f"feature_{i}": f"feature {i}", f"weight_{i}": str(weight), f"reason_{i}": f"reason {i} " * 10}
    return data


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--respondents", type=int, default=300)
    args = parser.parse_args()
    database = setup_django()

    from django.db import connection
    from django.test import Client
    from django.urls import reverse

    from surveys.models import Answer, RespondentTask, Study, System
    from surveys.services.respondent_survey import record_consent, start_prolific_respondent
    from tests.conftest import make_study

    Study.objects.filter(slug__startswith="bench-answering").delete()  # a previous run, in a kept database
    study = make_study(
        slug="bench-answering", systems=("gpt",), vignettes=24, reference="gpt", completion_code="BENCH1"
    )
    System.objects.filter(study=study).update(kind="llm", provider="openai", model="gpt-4o")
    System.objects.create(study=study, key="lay", label="Lay people", kind="human", position=1)
    slug, n = study.slug, args.respondents
    consent_url = reverse("surveys:answering-consent", args=[slug])
    done_url = reverse("surveys:answering-done", args=[slug])

    def page(position: int) -> str:
        return reverse("surveys:answering-write", args=[slug, position])

    def entry(i: int) -> str:
        return f"/r/{slug}/?PROLIFIC_PID={i:024x}&STUDY_ID={'a' * 24}&SESSION_ID={10**6 + i:024x}"

    warm = Client()
    for _ in range(20):
        warm.get("/healthz")
    timings: dict[str, list[float]] = {k: [] for k in ["base", "entry", "consent", "get", "post", "again", "done"]}

    def timed(name: str, call):
        start = time.perf_counter()
        response = call()
        timings[name].append(time.perf_counter() - start)
        return response

    for i in range(n):
        client = Client()
        timed("base", lambda: client.get("/healthz"))  # noqa: B023
        timed("entry", lambda: client.get(entry(i)))  # noqa: B023
        timed("consent", lambda: client.post(consent_url, {"agree": "yes"}))  # noqa: B023
        for position in (1, 2, 3):
            timed("get", lambda: client.get(page(position)))  # noqa: B023
            response = timed("post", lambda: client.post(page(position), answer_post(i)))  # noqa: B023
            assert response.status_code == 302, response.content[:500]
        timed("again", lambda: client.post(page(3), answer_post(i)))  # noqa: B023
        response = timed("done", lambda: client.get(done_url))  # noqa: B023
        assert response.url.endswith("cc=BENCH1"), response

    b = statistics.fmean(timings["base"])
    print(f"database: {database.split('@')[-1]}; respondents: {n}; m=3 of 24 vignettes")
    print(f"{'request':<36} {'n':>6} {'mean ms':>9} {'p95 ms':>9} {'ratio':>9}")
    print(row("baseline GET /healthz", timings["base"], b))
    print(row("entry from the Prolific link", timings["entry"], b))
    print(row("consent + assign 3 vignettes", timings["consent"], b))
    print(row("GET a writing page", timings["get"], b))
    print(row("POST an answer (5 features)", timings["post"], b))
    print(row("POST the same page again (no-op)", timings["again"], b))
    print(row("completion redirect", timings["done"], b))
    per_vignette = Counter(RespondentTask.objects.filter(respondent__study=study).values_list("vignette", flat=True))
    answers = Answer.objects.filter(system__key="lay", vignette__study=study).count()
    print(
        f"pages per vignette: min {min(per_vignette.values())}, max {max(per_vignette.values())}; "
        f"answers stored {answers} for {3 * n} pages (duplicates {answers - 3 * n})"
    )

    if connection.vendor != "postgresql":
        print("simultaneous arrivals: skipped (needs PostgreSQL: set DATABASE_URL)")
        return
    before = Counter(RespondentTask.objects.filter(respondent__study=study).values_list("vignette", flat=True))
    barrier, errors, threads = threading.Barrier(8), [], []

    def arrive(t: int) -> None:
        try:
            barrier.wait()
            for j in range(n // 8):
                i = 10**5 + t * 10**4 + j
                respondent = start_prolific_respondent(
                    study=study, prolific_pid=f"{i:024x}", prolific_study_id="a" * 24, session_id=f"{10**7 + i:024x}"
                )
                record_consent(respondent=respondent, agreed=True)
        except Exception as exc:
            errors.append(repr(exc))
        finally:
            connection.close()

    start = time.perf_counter()
    for t in range(8):
        threads.append(threading.Thread(target=arrive, args=(t,)))
        threads[-1].start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    after = Counter(RespondentTask.objects.filter(respondent__study=study).values_list("vignette", flat=True))
    added = {v: after[v] - before.get(v, 0) for v in after}
    print(
        f"simultaneous arrivals: {8 * (n // 8)} in 8 threads in {elapsed:.2f} s; pages per vignette "
        f"min {min(added.values())}, max {max(added.values())} (spread {max(added.values()) - min(added.values())}); "
        f"errors {len(errors)}{': ' + errors[0] if errors else ''}"
    )


if __name__ == "__main__":
    main()
