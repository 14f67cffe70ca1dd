"""A pilot on the quickstart: `make run`'s SQLite database and server with a class at work at once.

A lab pilots a study with a classroom before paying Prolific, on `make run` as the README starts it. This
starts that: a fresh SQLite file, `manage.py runserver` with DEBUG on (threads, one process) and the
project's settings for SQLite, then, all at the same time:

- `--judges` judges walking the judging survey over HTTP (harness.judge: link, consent, demographics, every
  pair, attention check, completion page), each giving up at its first failed page;
- `--writers` lay respondents writing answers in the answer-writing survey over HTTP (consent, every page);
- `manage.py simulate_judges` adding `--simulated` judges through the services, in its own process;
- `manage.py prolific_sandbox`, the Prolific stand-in, which holds the study's draft, turns every judge who
  finishes into a submission and sends each a signed webhook to the server (its own process too).

Printed: server errors (HTTP 5xx and dropped connections) by page, judges and writers who finished, the
judging pages the server acknowledged against the judgments stored, simulate_judges' and the sandbox's exit
and any traceback, and the webhooks the server took. Goal at 30 judges and 10 writers: 0 errors, everyone
finished, every acknowledged judgment stored. Run larger (`--judges 200 --writers 40`) to find where SQLite
stops holding; README "A pilot on the quickstart" has the numbers.

    .venv/bin/python benchmarks/pilot.py [--judges 30] [--writers 10] [--simulated 10]

The entry limit (ENTRY_RATE_LIMIT) is off: every simulated person comes from 127.0.0.1, while a class
comes from many addresses.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness

ROOT = harness.ROOT
WEBHOOK_SECRET = "pilot-benchmark-webhook-secret"
SANDBOX_TOKEN = "sandbox-prolific-token"
SANDBOX = [harness.PYTHON, "manage.py", "prolific_sandbox"]


def pilot_env(*, database: Path, sandbox_port: int) -> dict:
    """`make run`'s environment (DEBUG on, SQLite, no broker) pointed at the sandbox."""
    unset = ("REDIS_URL", "CELERY_BROKER_URL", "CACHE_REDIS_URL", "DATABASE_URL", "PYTEST_XDIST_WORKER")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(
        DATABASE_URL=f"sqlite:///{database}",
        DEBUG="1",
        SECRET_KEY="pilot-benchmark-only",
        DJANGO_SETTINGS_MODULE="moraljudge.settings",
        ENV_FILE="",
        LOG_LEVEL="WARNING",
        ENTRY_RATE_LIMIT="off",
        PROLIFIC_API_URL=f"http://127.0.0.1:{sandbox_port}/api/v1/",
        PROLIFIC_API_TOKEN=SANDBOX_TOKEN,
        PROLIFIC_WEBHOOK_SECRET=WEBHOOK_SECRET,
    )
    return env


def start_runserver(env: dict, port: int, log) -> subprocess.Popen:
    """`make run`'s last step: runserver (threaded) on 127.0.0.1:port, returned once /healthz answers."""
    command = [harness.PYTHON, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(300):
        try:
            if harness.httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except harness.httpx.HTTPError:
            time.sleep(0.1)
    server.terminate()
    raise SystemExit("runserver did not come up")


def load_studies(*, slug: str, judges: int, directory: Path) -> tuple[str, list[str]]:
    """A live judging study with room for every judge, and a draft study whose lay system takes answers."""
    from surveys.models import Study, System
    from tests.conftest import make_study

    systems, vignettes, k = 4, 10, 5  # 6 pairs x 10 vignettes = 60 cells, 5 pairs a judge
    repetitions = math.ceil(judges * 1.5 * k / (6 * vignettes))  # room to spare: nobody meets "study is full"
    data = harness.judging_study_file(slug=slug, systems=systems, vignettes=vignettes, repetitions=repetitions, k=k)
    harness.import_study_file(data, directory)
    writing = make_study(slug=f"{slug}-writing", systems=("gpt",), vignettes=12, reference="gpt")
    System.objects.filter(study=writing).update(kind="llm", provider="openai", model="gpt-4o")
    System.objects.create(study=writing, key="lay", label="Lay people", kind="human", position=1)
    return Study.objects.get(slug=slug).slug, harness.QUESTION_KEYS


def send_to_sandbox(slug: str, base: str) -> str:
    """The study's Prolific draft, created in the sandbox as *Create or update Prolific draft* does."""
    from surveys.models import Study
    from surveys.prolific.drafts.sending import send_draft

    study = Study.objects.get(slug=slug)
    return send_draft(study=study, study_url=f"{base}/s/{slug}/").prolific_id


def writer(rec: harness.Recorder, base: str, slug: str, number: int) -> str:
    """One lay respondent through the answer-writing survey; returns 'written'."""
    pid = f"{10**6 + number:024x}"
    link = f"{base}/r/{slug}/?PROLIFIC_PID={pid}&STUDY_ID={'a' * 24}&SESSION_ID={10**7 + number:024x}"
    with harness.new_client(base, timeout=120) as client:
        url = rec.request(client, "writer entry", "GET", link, (302,)).headers["location"]
        url = harness.form_post(rec, client, "writer consent", url, {"agree": "yes"})[0]
        pages = 0
        while "/write/" in url:
            url = harness.form_post(rec, client, "writing page", url, answer_post(number))[0]
            pages += 1
        rec.request(client, "writer done", "GET", url, (200, 302))
        if not pages:
            raise RuntimeError(f"no writing page (sent to {url})")
        return "written"


def answer_post(n: int) -> dict:
    data = {"action": f"Do the right thing, {n}.", "additional_information": "Who else knows?"}
    for i, weight in enumerate([40, 25, 15, 10, 10], start=1):
        data |= {f"feature_{i}": f"feature {i}", f"weight_{i}": str(weight), f"reason_{i}": f"reason {i} " * 10}
    return data


def server_errors(log: Path) -> list[str]:
    """The tracebacks' last lines in runserver's output (what a researcher would see in the terminal)."""
    text = log.read_text(errors="replace")
    return re.findall(r"^(\w+(?:\.\w+)*(?:Error|Exception|Locked)\b.*)$", text, flags=re.M)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judges", type=int, default=30, help="judges over HTTP at once (default 30)")
    parser.add_argument("--writers", type=int, default=10, help="answer writers over HTTP at once (default 10)")
    parser.add_argument("--simulated", type=int, default=10, help="simulate_judges' judges meanwhile (default 10)")
    args = parser.parse_args()

    directory = Path(tempfile.mkdtemp(prefix="mj-pilot-"))
    database, log_path = directory / "db.sqlite3", directory / "runserver.log"
    web_port, sandbox_port = harness.free_port(), harness.free_port()
    base = f"http://127.0.0.1:{web_port}"
    env = pilot_env(database=database, sandbox_port=sandbox_port)
    os.environ.clear()  # this process is a quickstart too: no Redis left over from a suite that started it
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    slug = "pilot"
    load_studies(slug=slug, judges=args.judges + args.simulated, directory=directory)
    connection.close()

    processes: list[subprocess.Popen] = []
    with open(log_path, "w") as log:
        try:
            processes.append(start_runserver(env, web_port, log))
            sandbox = subprocess.Popen(
                [*SANDBOX, "--port", str(sandbox_port), "--webhook-url", f"{base}/prolific/webhook/"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            processes.append(sandbox)
            for _ in range(100):  # the sandbox answers once its port is open
                try:
                    harness.httpx.get(f"http://127.0.0.1:{sandbox_port}/", timeout=1)
                    break
                except harness.httpx.HTTPError:
                    time.sleep(0.1)
            prolific_id = send_to_sandbox(slug, base)
            connection.close()

            rec = harness.Recorder()
            simulate = subprocess.Popen(
                [harness.PYTHON, "manage.py", "simulate_judges", slug, "--judges", str(args.simulated)],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            processes.append(simulate)
            results: dict[str, tuple] = {}

            def judges() -> None:
                results["judges"] = harness.run_pool(
                    args.judges,
                    range(args.judges),
                    lambda n: harness.judge(rec, base, slug, n, harness.QUESTION_KEYS, study_id=prolific_id),
                )

            def writers() -> None:
                results["writers"] = harness.run_pool(
                    args.writers, range(args.writers), lambda n: writer(rec, base, f"{slug}-writing", n)
                )

            threads = [threading.Thread(target=judges), threading.Thread(target=writers)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            simulate_out = simulate.communicate(timeout=600)[0]
            time.sleep(6)  # the sandbox's last round: submissions every 2 s, then their webhooks
            sandbox.send_signal(signal.SIGINT)  # Ctrl-C, as a researcher stops it
            sandbox_out = sandbox.communicate(timeout=180)[0]  # a loaded machine finishes its last webhooks slowly
        finally:
            for process in processes:
                if process.poll() is None:
                    process.terminate()
                    process.wait(timeout=30)

    report(
        args=args,
        rec=rec,
        results=results,
        simulate=(simulate.returncode, simulate_out),
        sandbox=(sandbox.returncode, sandbox_out),
        errors=server_errors(log_path),
        slug=slug,
        prolific_id=prolific_id,
    )


def report(*, args, rec, results, simulate, sandbox, errors, slug, prolific_id) -> None:
    from collections import Counter

    from surveys.models import Answer, Judgment

    judged, judge_errors, judge_seconds = results["judges"]
    written, writer_errors, _ = results["writers"]
    acknowledged = sum(rec.acknowledged.values()) * len(harness.QUESTION_KEYS)  # a page holds one per question
    stored = Judgment.objects.filter(assignment__participant__prolific_pid__in=list(rec.acknowledged)).count()
    lay_answers = Answer.objects.filter(system__key="lay", vignette__study__slug=f"{slug}-writing").count()
    webhook_lines = [line for line in sandbox[1].splitlines() if line.startswith("Webhook")]
    failures = Counter(rec.failures)
    print(
        f"pilot on make run's SQLite: {args.judges} judges + {args.writers} writers over HTTP at once, "
        f"simulate_judges --judges {args.simulated}, the Prolific sandbox sending webhooks"
    )
    print(f"server errors seen by participants: {len(rec.failures)}" + (f" {dict(failures)}" if failures else ""))
    print(f"tracebacks in runserver's output: {len(errors)}" + (f" (first: {errors[0][:160]})" if errors else ""))
    print(
        f"judges finished: {judged.count('completed')}/{args.judges} in {judge_seconds:.1f} s"
        + (f"; failed: {judge_errors[0][:160]}" if judge_errors else "")
    )
    print(f"writers finished: {written.count('written')}/{args.writers}; lay answers stored {lay_answers}")
    print(f"judgments on pages acknowledged to judges {acknowledged}, stored {stored}: lost {acknowledged - stored}")
    simulate_tail = simulate[1].strip().splitlines()[-1:] or ["(no output)"]
    print(f"simulate_judges: exit {simulate[0]}, {simulate_tail[0][:160]}")
    crashed = "Traceback" in sandbox[1]
    print(
        f"prolific_sandbox: exit {sandbox[0]}{', crashed' if crashed else ''}; webhooks sent {len(webhook_lines)}, "
        f"recorded {sum(line.endswith('recorded') for line in webhook_lines)}, "
        f"refused {sum('refused' in line for line in webhook_lines)} (study {prolific_id})"
    )
    ok = not rec.failures and not errors and not judge_errors and not writer_errors
    ok = ok and acknowledged == stored and simulate[0] == 0 and sandbox[0] == 0 and not crashed
    print("pilot held: " + ("yes" if ok else "NO"))


if __name__ == "__main__":
    main()
