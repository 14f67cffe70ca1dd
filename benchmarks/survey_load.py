"""The judging survey under load: N simulated judges over HTTP against gunicorn + PostgreSQL.

Run: `python benchmarks/survey_load.py [--participants 600] [--concurrency 50]`. It creates a fresh
PostgreSQL database (dropped at the end unless --keep), migrates it, loads a study shaped like the
method's (8 systems x 12 vignettes = 336 cells, R=8 -> 2,688 places, k=5), starts gunicorn with 3
sync workers on 127.0.0.1, and sends the judges through the whole survey with httpx from C threads:
link -> consent -> demographics -> k pairs -> attention check -> completion page. When the study is
full the last arrivals see the "study is full" page; that is counted, not an error.

Printed: completed participants, errors, judgments stored vs expected, cell fill (max - min and
against the target), and the judging page's throughput and p95 latency as ratios to the trivial
/healthz view served by the same server in the same run (timings only mean anything as ratios).
Then, on a study of its own, `--step-rounds` rounds at each `--step-concurrency` (1 and 30): each
step's p95 as a ratio to the /healthz p95 of the same round, and judges completed per second, printed
as the median with the lowest and highest round (benchmarks/step_ratios.py). Every load-generator
client shares one TLS context (harness.new_client), so building clients costs the baseline nothing.

Across hosts: `--web-processes 3 --nginx` starts three gunicorn processes on ports of their own (as three
hosts would be) behind Debian's nginx running deploy/nginx.conf unprivileged from a temporary directory, and
sends everything through nginx, which hands each request to the next process: a participant's consent,
pairs and attention check land on different processes, and so do a researcher's sign-in and the admin
pages after it. The guarantees are checked either way and the script exits 1 if one fails: with the study
full, every cell exactly at its target (counters and stored judgments alike), no judgment the server
acknowledged missing, no cell over-allocated.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import step_ratios
from harness import (
    CSRF,
    DEMOGRAPHICS,
    Recorder,
    drop_database,
    form_post,
    free_port,
    fresh_database,
    judge,
    new_client,
    p95,
    run_pool,
    server_env,
    setup_django,
    start_gunicorn,
    start_nginx,
)

RESEARCHER = ("bench-researcher", "bench-researcher-password-1")


def load_study(*, slug: str, repetitions: int, k: int, systems: int, vignettes: int):
    from surveys.services.lifecycle import go_live
    from tests.conftest import make_study

    study = make_study(
        slug=slug,
        systems=[f"system{i}" for i in range(systems)],
        vignettes=vignettes,
        reference="system0",
        repetitions=repetitions,
        vignettes_per_participant=k,
        minimum_seconds=0,
        fast_fraction_of_median=0,  # simulated judges are fast by nature: keep them valid
        completion_code="BENCHOK",
        screened_out_code="BENCHFULL",
        reservation_minutes=120,
    )
    return go_live(study=study)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=600)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--repetitions", type=int, default=8, help="R: judges wanted per cell (the method's 8)")
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--vignettes", type=int, default=12)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--baseline-requests", type=int, default=3000)
    parser.add_argument("--postgres", default=os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432"))
    parser.add_argument("--database", default="mj_survey_bench")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--web-processes", type=int, default=1, help="gunicorn processes, each on a port of its own")
    parser.add_argument("--nginx", action="store_true", help="every request through nginx (deploy/nginx.conf)")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database afterwards")
    parser.add_argument("--step-rounds", type=int, default=3, help="rounds of per-step ratios (0: none)")
    parser.add_argument("--step-judges", type=int, default=30, help="judges per round (at least the concurrency)")
    parser.add_argument("--step-concurrency", default="1,30", help="concurrencies of the per-step rounds")
    args = parser.parse_args()
    if args.web_processes > 1 and not args.nginx:
        parser.error("--web-processes above 1 needs --nginx in front of them")

    database_url = fresh_database(args.postgres, args.database)
    env = server_env(database_url)
    setup_django(env)
    from django.db.models import F, Max, Min, Sum

    from surveys.models import Cell, Judgment, Participant

    study = load_study(
        slug="bench", repetitions=args.repetitions, k=args.k, systems=args.systems, vignettes=args.vignettes
    )
    pages_study = load_study(slug="bench-pages", repetitions=10_000, k=args.k, systems=args.systems, vignettes=args.k)
    steps_study = load_study(slug="bench-steps", repetitions=10_000, k=args.k, systems=args.systems, vignettes=args.k)
    questions = list(study.questions.values_list("key", flat=True))
    cells = Cell.objects.filter(study=study).count()
    places = cells * args.repetitions
    print(
        f"study: {args.systems} systems x {args.vignettes} vignettes = {cells} cells, R={args.repetitions} -> "
        f"{places} places, k={args.k}: room for {places // args.k} of {args.participants} judges "
        f"(the rest see 'study is full')"
    )

    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user(RESEARCHER[0], password=RESEARCHER[1], is_staff=True, is_superuser=True)

    workdir = Path(tempfile.mkdtemp(prefix="mj-survey-load-"))
    ports = [free_port() for _ in range(args.web_processes)]
    servers = []
    try:
        with ThreadPoolExecutor() as starting:  # all at once: each takes seconds to load Django
            # Behind nginx, each process logs the requests it served (gunicorn reads GUNICORN_CMD_ARGS).
            envs = [
                {**env, "GUNICORN_CMD_ARGS": f"--access-logfile={workdir / f'web{n + 1}.log'}"} if args.nginx else env
                for n in range(len(ports))
            ]
            started = [
                starting.submit(start_gunicorn, web_env, workers=args.workers, port=port)
                for port, web_env in zip(ports, envs, strict=True)
            ]
        servers += [future.result() for future in started if future.exception() is None]
        for future in started:
            future.result()  # raises the first failure; the finally below stops those that came up
        if args.nginx:
            proxy_port = free_port()
            (workdir / "nginx").mkdir()
            servers.append(start_nginx(upstreams=ports, port=proxy_port, directory=workdir / "nginx"))
            base = f"http://127.0.0.1:{proxy_port}"
        else:
            base = f"http://127.0.0.1:{ports[0]}"
        # Baseline: the trivial view (one SELECT 1), same server, same concurrency, same client code.
        rec_base = Recorder()

        def health(_):
            with new_client(base) as client:
                for _ in range(10):
                    rec_base.request(client, "healthz", "GET", "/healthz", (200,))
            return "ok"

        run_pool(args.concurrency, range(5), health)  # warm-up
        rec_base = Recorder()
        _, base_errors, base_wall = run_pool(args.concurrency, range(args.baseline_requests // 10), health)
        healthz = rec_base.samples["healthz"]
        healthz_rps = len(healthz) / base_wall

        # The survey itself.
        rec = Recorder()
        outcomes, errors, wall = run_pool(
            args.concurrency, range(args.participants), lambda n: judge(rec, base, study.slug, n, questions)
        )

        # Judging page alone: judges sitting on their first pair, reloading it (render + one UPDATE guard).
        rec_pages = Recorder()
        holders = []
        for n in range(args.concurrency):
            client = new_client(base)
            link = (
                f"/s/{pages_study.slug}/?PROLIFIC_PID={10**6 + n:024x}&STUDY_ID={'c' * 24}&SESSION_ID={10**6 + n:024x}"
            )
            url = rec_pages.request(client, "setup", "GET", link, (302,)).headers["location"]
            url, _ = form_post(rec_pages, client, "setup", url, {"consent": "yes", "anonymised": "yes"})
            url, _ = form_post(rec_pages, client, "setup", url, DEMOGRAPHICS)
            holders.append((client, url))
        per_holder = max(1, args.baseline_requests // args.concurrency)

        def reload_page(index):
            client, url = holders[index]
            for _ in range(per_holder):
                rec_pages.request(client, "judging page GET only", "GET", url, (200,))
            return "ok"

        _, page_errors, page_wall = run_pool(args.concurrency, range(args.concurrency), reload_page)
        for client, _ in holders:
            client.close()
        step_lines, step_errors = step_ratios.measure(
            base,
            slug=steps_study.slug,
            questions=questions,
            concurrencies=[int(c) for c in args.step_concurrency.split(",")],
            rounds=args.step_rounds,
            judges=args.step_judges,
        )
        signed_in = researcher_pages(base, pages=2 * args.web_processes + 1)
    finally:
        for server in reversed(servers):
            server.terminate()
            server.wait(timeout=30)
    served = (
        [len((workdir / f"web{n + 1}.log").read_text().splitlines()) for n in range(len(ports))] if args.nginx else []
    )
    shutil.rmtree(workdir, ignore_errors=True)

    completed = outcomes.count("completed")
    full = outcomes.count("full")
    valid = Participant.objects.filter(study=study, status=Participant.Status.COMPLETED, exclusion="").count()
    stored = Judgment.objects.filter(assignment__participant__study=study).count()
    expected = completed * args.k * len(questions)
    fill = Cell.objects.filter(study=study).aggregate(
        lo=Min(F("completed") + F("reserved")), hi=Max(F("completed") + F("reserved")), reserved=Sum("reserved")
    )
    over = Cell.objects.filter(study=study, completed__gt=F("target") - F("reserved")).count()

    judging = rec.samples["judging page GET"] + rec.samples["judging page POST"]
    judging_rps = len(judging) / wall
    page_only = rec_pages.samples["judging page GET only"]
    page_rps = len(page_only) / page_wall
    in_front = f" x {args.web_processes} processes behind nginx" if args.nginx else ""
    print(
        f"server: gunicorn, {args.workers} sync workers{in_front}; PostgreSQL database {args.database}; "
        f"concurrency {args.concurrency}"
    )
    if served:
        print(f"requests served per web process: {' / '.join(map(str, served))}")
    print(
        f"participants: {args.participants} arrived, {completed} completed ({valid} valid), "
        f"{full} saw 'study is full', errors {len(errors)}"
    )
    for error in sorted(set(errors))[:5]:
        print(f"  error: {error}")
    print(f"judgments stored: {stored} of {expected} expected ({expected - stored} lost)")
    print(
        f"cell fill: min {fill['lo']}, max {fill['hi']} (max - min = {fill['hi'] - fill['lo']}), target {args.repetitions}, "
        f"cells over target: {over}, reservations left: {fill['reserved']}"
    )
    print(
        f"baseline /healthz: {len(healthz)} requests, {healthz_rps:.0f} req/s, "
        f"p50 {statistics.median(healthz) * 1000:.1f} ms, p95 {p95(healthz) * 1000:.1f} ms, errors {len(base_errors)}"
    )
    print(
        f"survey run: {sum(len(v) for v in rec.samples.values())} requests in {wall:.1f} s; "
        f"judging pages (GET+POST) {judging_rps:.0f} req/s = {judging_rps / healthz_rps:.2f}x baseline throughput"
    )
    for kind in ("judging page GET", "judging page POST"):
        samples = rec.samples[kind]
        print(
            f"  {kind:<18} n={len(samples):>5}  p95 {p95(samples) * 1000:7.1f} ms = "
            f"{p95(samples) / p95(healthz):.2f}x baseline p95"
        )
    print(
        f"  all judging pages  n={len(judging):>5}  p95 {p95(judging) * 1000:7.1f} ms = "
        f"{p95(judging) / p95(healthz):.2f}x baseline p95"
    )
    print(
        f"judging page alone (reloads, {len(page_only)} requests): {page_rps:.0f} req/s = "
        f"{page_rps / healthz_rps:.2f}x baseline throughput; p95 {p95(page_only) * 1000:.1f} ms = "
        f"{p95(page_only) / p95(healthz):.2f}x baseline p95; errors {len(page_errors)}"
    )

    print("\n".join(step_lines))
    print(f"researcher signed in through {base}: {signed_in}")
    failures = guarantees(study=study, recorder=rec, questions=questions, full=full)
    failures += [] if signed_in == "admin pages served" else [f"sign-in: {signed_in}"]

    from django.db import connections

    connections.close_all()
    if not args.keep:
        drop_database(args.postgres, args.database)
    if failures or errors or page_errors or step_errors:
        raise SystemExit(1)


def guarantees(*, study, recorder, questions: list[str], full: int) -> list[str]:
    """The allocation guarantees, printed one a line; returns those that failed."""
    from django.db.models import Count, F

    from surveys.models import Cell, Judgment

    acknowledged = sum(recorder.acknowledged.values()) * len(questions)
    stored = Judgment.objects.filter(assignment__participant__study=study).count()
    judged = dict(
        Judgment.objects.filter(assignment__cell__study=study)
        .values_list("assignment__cell")
        .annotate(n=Count("assignment", distinct=True))
    )
    cells = list(Cell.objects.filter(study=study).select_related("vignette"))
    at_target = sum(cell.completed == cell.target == judged.get(cell.pk, 0) for cell in cells)
    over = Cell.objects.filter(study=study, completed__gt=F("target") - F("reserved")).count()
    checks = [
        (f"judgments acknowledged to judges {acknowledged}, stored {stored}: lost", acknowledged - stored, 0),
        ("cells over-allocated (completed + reserved above target)", over, 0),
    ]
    if full:  # the last arrivals found the study full: every place was taken
        checks.append(
            (f"cells exactly at target (counters and stored judgments), of {len(cells)}", at_target, len(cells))
        )
    else:
        print(f"guarantee: fill not checked, the study did not fill ({at_target} of {len(cells)} cells at target)")
    if full and at_target < len(cells):  # which vignettes kept places no arrival could take (k distinct ones)
        left = Counter()
        for cell in cells:
            left[cell.vignette.key] += cell.target - cell.completed
        print(f"  places left by vignette: {dict(+left)}")
    failures = []
    for what, value, wanted in checks:
        ok = value == wanted
        print(f"guarantee: {what} {value} ({'ok' if ok else f'FAILED, wanted {wanted}'})")
        if not ok:
            failures.append(what)
    return failures


def researcher_pages(base: str, *, pages: int) -> str:
    """Sign in to the admin through `base`, then load the admin index `pages` times: behind nginx each request
    goes to the next web process, so the CSRF cookie and the session must be good on all of them."""
    with new_client(base) as client:
        login = client.get("/admin/login/?next=/admin/")
        token = CSRF.search(login.text).group(1)
        data = {"username": RESEARCHER[0], "password": RESEARCHER[1], "csrfmiddlewaretoken": token, "next": "/admin/"}
        signed = client.post("/admin/login/?next=/admin/", data=data)
        if signed.status_code != 302 or signed.headers["location"] != "/admin/":
            return f"sign-in answered {signed.status_code}"
        for _ in range(pages):
            page = client.get("/admin/")
            if page.status_code != 200 or "Log out" not in page.text:
                return f"an admin page after sign-in answered {page.status_code} {page.headers.get('location', '')}"
    return "admin pages served"


if __name__ == "__main__":
    main()
