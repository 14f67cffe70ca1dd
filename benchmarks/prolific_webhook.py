"""Prolific integration cost: signed webhooks and reconciliation, as ratios to a baseline in the same run.

Run standalone: `python benchmarks/prolific_webhook.py [--participants 600]` (uses DATABASE_URL, or a
temporary SQLite file). Everything runs in-process through Django's test client (no network, no
server): it measures our handling, not HTTP.

Printed:
- baseline: GET /healthz (one SELECT 1) per request;
- webhook AWAITING REVIEW: verify the HMAC, record the event, update one participant;
- webhook RETURNED: the same plus reopening the participant's k cells;
- webhook repeated: a redelivered event (verify, then the unique event id refuses it);
- reconcile: one `reconcile_study` over N submissions from a fake Prolific on 127.0.0.1, first
  pass (every status new) and second pass (nothing to do), against listing the same pages alone.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SECRET = "bench-secret"


def setup_django() -> str:
    tmp = tempfile.mkdtemp(prefix="mj-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ["DEBUG"] = "1"
    os.environ["PROLIFIC_WEBHOOK_SECRET"] = SECRET
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    call_command("migrate", verbosity=0)
    setup_test_environment()  # lets the test client's 'testserver' host in
    return os.environ["DATABASE_URL"]


def signed(client, payload: dict):
    body = json.dumps(payload).encode()
    ts = str(int(time.time()))
    sig = base64.b64encode(hmac.new(SECRET.encode(), ts.encode() + body, hashlib.sha256).digest()).decode()
    return client.post(
        "/prolific/webhook/",
        data=body,
        content_type="application/json",
        HTTP_X_PROLIFIC_REQUEST_SIGNATURE=sig,
        HTTP_X_PROLIFIC_REQUEST_TIMESTAMP=ts,
    )


def timed(fn, items) -> list[float]:
    out = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        out.append(time.perf_counter() - start)
    return out


def row(name: str, samples: list[float], base: float) -> str:
    mean = statistics.fmean(samples)
    p95 = sorted(samples)[int(0.95 * (len(samples) - 1))]
    return f"{name:<34} {len(samples):>6} {mean * 1000:>9.2f} {p95 * 1000:>9.2f} {mean / base:>8.1f}x"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--participants", type=int, default=600)
    args = parser.parse_args()
    database = setup_django()

    from django.conf import settings
    from django.db.models import Sum
    from django.test import Client

    from surveys.models import Cell, Participant, ProlificEvent, Study
    from surveys.prolific import client as prolific_client
    from surveys.prolific import reconcile_study
    from surveys.services.allocation import allocate
    from surveys.services.lifecycle import go_live
    from tests.conftest import make_study
    from tests.fakes.prolific_server import FakeProlific

    n = args.participants
    old = Study.objects.filter(slug__startswith="bench-")  # a previous run, in a kept database
    Participant.objects.filter(study__in=old).delete()
    Cell.objects.filter(study__in=old).delete()
    old.delete()
    study = make_study(
        slug="bench-prolific",
        systems=[f"s{i}" for i in range(8)],
        vignettes=12,
        repetitions=max(8, n),
        vignettes_per_participant=5,
        prolific_study_id="bench-st",
        reference="s0",
    )
    study = go_live(study=study)
    people = []
    for i in range(n):
        p = Participant.objects.create(study=study, prolific_pid=f"pid{i:06d}", session_id=f"sub{i:06d}")
        allocate(participant=p)
        people.append(p)
    ProlificEvent.objects.all().delete()
    client = Client()

    for _ in range(20):  # warm up: URL resolution, imports, connections
        client.get("/healthz")
        signed(client, _event(people[0], "ACTIVE"))
    base = timed(lambda _: client.get("/healthz"), range(n))
    awaiting = timed(
        lambda p: signed(client, _event(p, "AWAITING REVIEW")),
        people[: n // 2],
    )
    returned = timed(lambda p: signed(client, _event(p, "RETURNED")), people[n // 2 :])
    repeated = timed(lambda p: signed(client, _event(p, "RETURNED")), people[n // 2 :])
    reserved = Cell.objects.filter(study=study).aggregate(n=Sum("reserved"))["n"]
    assert reserved == (n - n // 2) * 5, reserved  # the first half still hold their 5 pages each

    with FakeProlific(page_size=200) as fake:
        settings.PROLIFIC_API_URL, settings.PROLIFIC_API_TOKEN = fake.url, fake.token
        for i, p in enumerate(people):
            status = "TIMED-OUT" if i % 3 == 0 else "AWAITING REVIEW"
            fake.add_submission(p.session_id, participant_id=p.prolific_pid, study_id="bench-st", status=status)
        list_only = timed(lambda _: prolific_client.list_submissions("bench-st"), range(3))
        first = timed(lambda _: reconcile_study(study=study), range(1))
        second = timed(lambda _: reconcile_study(study=study), range(3))

    b = statistics.fmean(base)
    print(f"database: {database.split('@')[-1]}; participants: {n}; k=5")
    print(f"{'operation':<34} {'n':>6} {'mean ms':>9} {'p95 ms':>9} {'ratio':>9}")
    print(row("baseline GET /healthz", base, b))
    print(row("webhook AWAITING REVIEW", awaiting, b))
    print(row("webhook RETURNED (5 cells reopen)", returned, b))
    print(row("webhook repeated (ignored)", repeated, b))
    lb = statistics.fmean(list_only)
    print(f"{'list submissions only':<34} {len(list_only):>6} {lb * 1000:>9.1f} {'':>9} {1.0:>8.1f}x  (baseline)")
    print(f"{'reconcile, first pass':<34} {1:>6} {first[0] * 1000:>9.1f} {'':>9} {first[0] / lb:>8.1f}x")
    print(
        f"{'reconcile, nothing new':<34} {len(second):>6} {statistics.fmean(second) * 1000:>9.1f} "
        f"{'':>9} {statistics.fmean(second) / lb:>8.1f}x"
    )


def _event(participant, status: str) -> dict:
    return {
        "resource_id": participant.session_id,
        "event_type": "submission.status.change",
        "participant_id": participant.prolific_pid,
        "status": status,
    }


if __name__ == "__main__":
    main()
