"""Invented Prolific ids from one address against a live study, with and without the entry rate limit.

Run: `python benchmarks/flood.py [--entries 20] [--limits off,3/10m]`. For each limit it starts gunicorn
(3 sync workers, PostgreSQL, the rate limit counted in the database across all workers) behind a
pretend proxy (CLIENT_IP_HEADER=X-Forwarded-For, TRUSTED_PROXIES=1, so one machine can be several
addresses), loads a small live study (3 systems x 4 vignettes = 12 cells, R=2 -> 24 places, k=2: room
for 12 judges), sends N invented ids from one address through link -> consent -> demographics (what
holds places), then one genuine arrival from another address.

Printed per limit: entries let in and refused (429), participant rows written, places the flood holds,
and whether the genuine arrival afterwards gets judging pages or the "study is full" page.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (
    DEMOGRAPHICS,
    Recorder,
    drop_database,
    form_post,
    free_port,
    fresh_database,
    new_client,
    server_env,
    setup_django,
    start_gunicorn,
)
from survey_load import load_study

FLOODER = "198.51.100.7"
GENUINE = "203.0.113.50"


def arrive(rec: Recorder, base: str, slug: str, number: int, address: str) -> str:
    """One arrival through consent and demographics: 'judging', 'full' or 'refused' (HTTP 429)."""
    link = f"/s/{slug}/?PROLIFIC_PID={number:024x}&STUDY_ID={'b' * 24}&SESSION_ID={number + 1:024x}"
    with new_client(base, headers={"X-Forwarded-For": address}) as client:
        response = rec.request(client, "entry", "GET", link, (302, 429))
        if response.status_code == 429:
            return "refused"
        url = response.headers["location"]
        if not url.endswith("/done/"):
            url = form_post(rec, client, "consent", url, {"consent": "yes", "anonymised": "yes"})[0]
            url = form_post(rec, client, "demographics", url, DEMOGRAPHICS)[0]
        return "judging" if "/pair/" in url else "full"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=20, help="invented ids sent from one address")
    parser.add_argument("--limits", default="off,3/10m", help="ENTRY_RATE_LIMIT values to compare")
    parser.add_argument("--postgres", default=os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432"))
    parser.add_argument("--database", default="mj_flood_bench")
    parser.add_argument("--workers", type=int, default=3)
    args = parser.parse_args()

    database_url = fresh_database(args.postgres, args.database)
    env = server_env(database_url) | {"CLIENT_IP_HEADER": "X-Forwarded-For", "TRUSTED_PROXIES": "1"}
    setup_django(env)
    from django.db.models import F, Sum

    from surveys.models import Cell, EntryAttempt, Participant

    try:
        for run, limit in enumerate(args.limits.split(",")):
            EntryAttempt.objects.all().delete()
            study = load_study(slug=f"flood{run}", repetitions=2, k=2, systems=3, vignettes=4)
            places = Cell.objects.filter(study=study).aggregate(n=Sum("target"))["n"]
            port = free_port()
            base = f"http://127.0.0.1:{port}"
            server = start_gunicorn(env | {"ENTRY_RATE_LIMIT": limit}, workers=args.workers, port=port)
            try:
                rec = Recorder()
                start = time.perf_counter()
                offset = run * 10_000
                flood = [arrive(rec, base, study.slug, offset + n, FLOODER) for n in range(args.entries)]
                seconds = time.perf_counter() - start
                genuine = arrive(rec, base, study.slug, offset + 5_000, GENUINE)
            finally:
                server.terminate()
                server.wait(timeout=30)
            held = Cell.objects.filter(study=study).aggregate(n=Sum(F("completed") + F("reserved")))["n"] - (
                2 if genuine == "judging" else 0
            )
            rows = Participant.objects.filter(study=study).count() - 1
            print(
                f"ENTRY_RATE_LIMIT={limit}: {args.entries} invented entries from one address in {seconds:.1f} s: "
                f"{flood.count('judging')} judging, {flood.count('full')} told full, {flood.count('refused')} "
                f"refused (429); {rows} participant rows; they hold {held} of {places} places. "
                f"Genuine arrival afterwards: {'gets judging pages' if genuine == 'judging' else 'told the study is full'}."
            )
    finally:
        from django.db import connections

        connections.close_all()
        drop_database(args.postgres, args.database)


if __name__ == "__main__":
    main()
