"""Shared by the HTTP benchmarks (survey_load.py, faults.py): a throwaway database, gunicorn, and judges.

A judge walks the whole judging survey over HTTP like a participant: link -> consent -> demographics -> k
pairs -> attention check -> completion page. With `patience` it behaves like a participant facing a broken
page: it waits and loads the page again (a GET first, so an answer the server did store is never sent twice).
Every judging page the server acknowledged (302 after the POST) is counted per participant, so a benchmark
can compare what participants were told was saved with what the database holds.
"""

from __future__ import annotations

import json
import os
import random
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
CODE = re.compile(r'class="code">([^<]+)<')
QUESTION_KEYS = ["features", "weighting", "reasons", "conclusion", "additional_info"]
DEMOGRAPHICS = {
    "gender": "Prefer not to say",
    "age": "35-44",
    "religion": "No religion",
    "education": "Bachelors/Undergraduate degree",
    "country": "United Kingdom",
}


# Services -------------------------------------------------------------------------------------------------
def fresh_database(base_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(f"{base_url}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{base_url}/{name}"


def drop_database(base_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(f"{base_url}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


_TLS: list = []  # one TLS context for every client (see new_client)


def new_client(base: str, **kwargs) -> httpx.Client:
    """An httpx client that shares one TLS context with every other one.

    Building a client with certificate verification loads the CA bundle (about 35 ms of CPU): a load
    generator making a client per judge, or per ten /healthz requests, spent that on every one and
    slowed the baseline it measures the server against. The servers here speak plain HTTP anyway.
    """
    if not _TLS:
        _TLS.append(ssl.create_default_context())
    kwargs.setdefault("timeout", 60)
    return httpx.Client(base_url=base, verify=_TLS[0], **kwargs)


_GIVEN: set[int] = set()


def free_port() -> int:
    """A free port on 127.0.0.1; with BENCH_PORTS="18100-18199" set, one of those (a shared machine's share)."""
    span = os.environ.get("BENCH_PORTS", "")
    candidates = range(int(span.split("-")[0]), int(span.split("-")[1]) + 1) if span else [0]
    for port in candidates:
        if port in _GIVEN:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            port = sock.getsockname()[1]
        if span:
            _GIVEN.add(port)  # not handed out twice before the caller's server binds it
        return port
    raise RuntimeError(f"no free port in BENCH_PORTS={span}")


def server_env(database_url: str, redis_url: str = "") -> dict:
    """A production-like environment (DEBUG off); without redis_url tasks run in-process."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CELERY_BROKER_URL", "CACHE_REDIS_URL")}
    env.update(
        DATABASE_URL=database_url,
        SECRET_KEY="benchmark-only-secret",
        DEBUG="0",
        ALLOWED_HOSTS="127.0.0.1",
        LOG_LEVEL="WARNING",
        DJANGO_SETTINGS_MODULE="moraljudge.settings",
        ENV_FILE="",  # never the checkout's development .env
        ENTRY_RATE_LIMIT="off",  # every simulated judge comes from 127.0.0.1
        LLM_ALLOWED_HOSTS="127.0.0.1",  # the fake LLM providers (llm_collect/keys.py)
    )
    if redis_url:
        env["REDIS_URL"] = redis_url
    return env


def setup_django(env: dict) -> None:
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("collectstatic", verbosity=0, interactive=False)


def start_gunicorn(env: dict, *, workers: int, port: int, log=None, timeout: int = 120) -> subprocess.Popen:
    """gunicorn with sync workers on 127.0.0.1:port, returned once /healthz answers; `log`: a file for its output.

    `timeout`: seconds a sync worker may spend on one request (a long streamed export needs more)."""
    command = [str(Path(PYTHON).parent / "gunicorn"), "moraljudge.wsgi", f"--workers={workers}"]
    command += ["--worker-class=sync", f"--bind=127.0.0.1:{port}", f"--timeout={timeout}", "--backlog=2048"]
    server = subprocess.Popen([*command, "--log-level=warning"], cwd=ROOT, env=env, stdout=log, stderr=log)
    for _ in range(200):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.1)
    server.terminate()
    raise SystemExit("gunicorn did not come up")


NGINX = "/usr/sbin/nginx"  # Debian's package


def nginx_config(*, upstreams: list[int], port: int, directory: Path) -> str:
    """deploy/nginx.conf (compose's) as it would run on this machine: on 127.0.0.1:port, in front of the
    gunicorn processes on `upstreams` instead of Docker's `web` containers, its files in `directory`."""
    text = (ROOT / "deploy" / "nginx.conf").read_text()
    servers = "".join(f"        server 127.0.0.1:{upstream};\n" for upstream in upstreams)
    edits = {
        "    server {\n": f"    upstream moraljudge_web {{\n{servers}    }}\n\n    server {{\n",
        "set $web http://web:8000;": "set $web http://moraljudge_web;",  # a group's name needs no resolver
        "listen 80;": f"listen 127.0.0.1:{port};",
        "http {\n": "http {\n"
        + "".join(
            f"    {kind}_temp_path {directory}/{kind};\n"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        ),
    }
    for old, new in edits.items():
        if text.count(old) != 1:
            raise SystemExit(f"deploy/nginx.conf changed shape: {old!r} is not there once; update nginx_config()")
        text = text.replace(old, new)
    return text


def start_nginx(*, upstreams: list[int], port: int, directory: Path) -> subprocess.Popen:
    """Debian's nginx in the foreground, unprivileged (a high port; config, pid, logs and temp files in
    `directory`), returned once /healthz answers through it."""
    if not Path(NGINX).exists():
        raise SystemExit(f"{NGINX} is missing: apt-get install nginx")
    directory.chmod(0o755)  # run as root, nginx's workers are `nobody` and keep their temp files here
    conf = directory / "nginx.conf"
    conf.write_text(nginx_config(upstreams=upstreams, port=port, directory=directory))
    command = [NGINX, "-p", str(directory), "-c", str(conf), "-e", str(directory / "error.log")]
    command += ["-g", f"pid {directory}/nginx.pid; daemon off;"]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        if server.poll() is not None:
            break
        time.sleep(0.1)
    server.terminate()
    raise SystemExit(f"nginx did not come up: {(directory / 'error.log').read_text()[-2000:]}")


def judging_study_file(
    *, slug: str, systems: int, vignettes: int, repetitions: int, k: int, reservation_minutes: int = 120
) -> dict:
    """A live study file of human systems with one selected answer each, for simulated judges."""
    keys = [f"system{i}" for i in range(systems)]
    features = [
        {"feature": "honesty", "weight": 60, "reason": "it matters"},
        {"feature": "harm", "weight": 40, "reason": "it hurts"},
    ]
    return {
        "slug": slug,
        "name": f"Benchmark {slug}",
        "status": "live",
        "reference_system": keys[0],
        "design": {
            "repetitions": repetitions,
            "vignettes_per_participant": k,
            "minimum_seconds": 1,  # a study file asks for at least 1
            "reservation_minutes": reservation_minutes,
        },
        "prolific": {"completion_code": "BENCHOK", "screened_out_code": "BENCHFULL"},
        "quality": {"fast_fraction_of_median": 0},  # simulated judges are fast by nature: keep them valid
        "questions": [{"key": key, "text": f"Which answer is better on {key}?"} for key in QUESTION_KEYS],
        "systems": [{"key": key, "label": key.title(), "kind": "human"} for key in keys],
        "vignettes": [
            {"key": f"v{n}", "character": f"Sam{n}", "text": f"Vignette {n} text."} for n in range(1, vignettes + 1)
        ],
        "answers": [
            {
                "system": key,
                "vignette": f"v{n}",
                "features": features,
                "action": f"{key} acts on v{n}",
                "additional_information": "more facts",
                "selected": True,
            }
            for key in keys
            for n in range(1, vignettes + 1)
        ],
    }


def import_study_file(data: dict, directory: Path) -> None:
    """Through the researcher's own command, `manage.py import_study` (a live file goes live)."""
    from django.core.management import call_command

    path = directory / f"{data['slug']}.study.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    call_command("import_study", str(path), stdout=open(os.devnull, "w"))  # noqa: SIM115


# Judges ---------------------------------------------------------------------------------------------------
class RequestFailed(RuntimeError):
    pass


@dataclass(frozen=True)
class Patience:
    """How a judge meets a failed page: `tries` loads in all, `pause` seconds apart (tries=1: give up at once)."""

    tries: int = 1
    pause: float = 0.5


class Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.samples: dict[str, list[float]] = defaultdict(list)
        self.failures: list[str] = []
        self.acknowledged: Counter[str] = Counter()  # judging pages the server confirmed, per participant id

    def request(self, client: httpx.Client, kind: str, method: str, url: str, expect: tuple[int, ...], **kw):
        start = time.perf_counter()
        try:
            response = client.request(method, url, **kw)
        except httpx.HTTPError as exc:
            self.fail(f"{method} {kind}: {type(exc).__name__}")
            raise RequestFailed(f"{method} {url} -> {exc!r}") from exc
        elapsed = time.perf_counter() - start
        with self.lock:
            self.samples[kind].append(elapsed)
        if response.status_code not in expect:
            self.fail(f"{method} {kind}: {response.status_code}")
            raise RequestFailed(f"{method} {url} -> {response.status_code}")
        return response

    def fail(self, what: str) -> None:
        with self.lock:
            self.failures.append(what)

    def acknowledge(self, pid: str) -> None:
        with self.lock:
            self.acknowledged[pid] += 1


def patiently(patience: Patience, attempt):
    for n in range(patience.tries):
        try:
            return attempt()
        except RequestFailed:
            if n == patience.tries - 1:
                raise
            time.sleep(patience.pause)


def form_post(rec: Recorder, client, kind: str, url: str, data: dict, patience: Patience = Patience()) -> tuple:
    """GET the form, POST it; returns (where the server sends us, whether it acknowledged this POST).

    A patient judge accepts a redirect on the GET: an earlier POST whose reply was lost did get through.
    """
    get_ok = (200,) if patience.tries == 1 else (200, 302)

    def attempt():
        page = rec.request(client, kind + " GET", "GET", url, get_ok)
        if page.status_code == 302:
            return page.headers["location"], False
        token = CSRF.search(page.text).group(1)
        response = rec.request(client, kind + " POST", "POST", url, (302,), data={**data, "csrfmiddlewaretoken": token})
        return response.headers["location"], True

    return patiently(patience, attempt)


def judge(
    rec: Recorder,
    base: str,
    slug: str,
    number: int,
    questions: list[str],
    *,
    patience: Patience = Patience(),
    think: float = 0.0,
    study_id: str = "b" * 24,
) -> str:
    """One judge through the whole survey; returns 'completed' or 'full'. `think`: seconds before each answer;
    `study_id`: the link's STUDY_ID (the study's Prolific id when it has one)."""
    pid = f"{number:024x}"
    link = f"{base}/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID={study_id}&SESSION_ID={number + 1:024x}"
    with new_client(base, timeout=120) as client:

        def step(kind, url, data):
            time.sleep(think)
            return form_post(rec, client, kind, url, data, patience)[0]

        url = patiently(patience, lambda: rec.request(client, "entry", "GET", link, (302,)).headers["location"])
        if not url.endswith("/done/"):  # a study already full sends a new arrival straight to its page
            url = step("consent", url, {"consent": "yes", "anonymised": "yes"})
            url = step("demographics", url, DEMOGRAPHICS)
        while "/pair/" in url:
            picks = {key: random.choice(["first", "second"]) for key in questions}
            picks[questions[0]], picks[questions[1]] = "first", "second"  # never a straight line
            time.sleep(think)
            url, acknowledged = form_post(rec, client, "judging page", url, picks, patience)
            if acknowledged:
                rec.acknowledge(pid)
        if url.endswith("/done/"):
            done = patiently(patience, lambda: rec.request(client, "done", "GET", url, (200,)))
            if "the study is full" in done.text:
                return "full"
            raise RuntimeError("done before judging")
        url = step("attention", url, {"choice": "2"})
        page = patiently(patience, lambda: rec.request(client, "done", "GET", url, (200,)))
        match = CODE.search(page.text)
        if not match or match.group(1) != "BENCHOK" or "submissions/complete?cc=BENCHOK" not in page.text:
            raise RuntimeError("no completion code")
        return "completed"


def run_pool(concurrency: int, jobs, work):
    outcomes: list[str] = []
    errors: list[str] = []
    lock = threading.Lock()

    def one(job):
        try:
            result = work(job)
        except Exception as exc:
            with lock:
                errors.append(repr(exc))
            return
        with lock:
            outcomes.append(result)

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(one, jobs))
    return outcomes, errors, time.perf_counter() - start


def p95(samples: list[float]) -> float:
    return sorted(samples)[int(0.95 * (len(samples) - 1))]
