"""Hostile input replayed against a running server: each attack of issue 21 item 5 and of issue 35, and what it got.

Run: `python benchmarks/attacks.py [--postgres postgres://postgres@127.0.0.1:5432]`. It starts, all its own: a
throwaway database (a temporary SQLite file, or `--database` on the given PostgreSQL server, dropped afterwards),
gunicorn with DEBUG off and a webhook secret, a live judging study with one Prolific participant holding places,
and a draft study with an expert invitation. Then, over HTTP as an attacker would send them:

- webhooks: a body nested 100,000 deep with a fresh timestamp and a wrong signature; one nested 5,000 deep under
  the size limit; a signed event with an unknown status; a captured request resent with a new X-Event-ID and an
  X-Timestamp ten years ahead (issue 35), then a genuine event; an older event (X-Timestamp) arriving after a newer one;
- an expert's page opened before the invitation expired, POSTed after it expired;
- issue 35: another team's STUDY_ID linked to a draft; LLM calls without a key to 169.254.169.254, 127.0.0.2 and
  localhost:5432; ten wrong passwords for a researcher from strangers' addresses (then she signs in from hers);
  a NUL in PROLIFIC_PID; answers CSVs with a 200,000-column header, a 200 KB cell and 2,000 rows;
  another team's judge model, not used yet, repointed to the attacker's server (its change page, a POST, and
  "Judge with LLMs" on the attacker's own study);
- study files through `manage.py import_study` (the only importer; run in this process against the server's
  database): `hourly_rate: 1e300`, 100,000 questions, a 6 MB file.

Printed per attack: what it got (HTTP status and the server's message, or the command's first error line),
whether anything was stored, and "ok" when it was refused as it should be. Exit status 1 if any was not.
About a minute here, most of it migrating and starting gunicorn.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import io
import json
import os
import re
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (
    CSRF,
    drop_database,
    free_port,
    fresh_database,
    import_study_file,
    judging_study_file,
    server_env,
    setup_django,
    start_gunicorn,
)

SECRET = "attacks-webhook-secret"
RESULTS: list[tuple[str, str, bool]] = []


def report(name: str, got: str, refused: bool) -> None:
    RESULTS.append((name, got, refused))
    print(f"{'ok  ' if refused else 'FAIL'} {name:<48} {got}", flush=True)


# The server's data ----------------------------------------------------------------------------------------
def prepare(directory: Path) -> dict:
    """A live judging study with participant sub1 holding places, and a draft study with an expert invitation."""
    from surveys.models import Participant, System
    from surveys.services.allocation import allocate
    from surveys.services.respondent_survey import create_invitation

    judging = judging_study_file(slug="attacks", systems=2, vignettes=2, repetitions=2, k=1)
    import_study_file(judging, directory)
    from surveys.models import Study

    study = Study.objects.get(slug="attacks")
    study.prolific_study_id, study.prolific_link = "st1", Study.ProlificLink.CREATED
    study.save(update_fields=["prolific_study_id", "prolific_link"])
    participant = Participant.objects.create(study=study, prolific_pid="pid1", session_id="sub1")
    allocate(participant=participant)
    writing = judging_study_file(slug="attacks-writing", systems=2, vignettes=2, repetitions=1, k=1)
    writing["status"] = "draft"
    writing["systems"].append({"key": "phil", "label": "Philosophers", "kind": "expert"})
    import_study_file(writing, directory)
    expert = System.objects.get(study__slug="attacks-writing", key="phil")
    invitation = create_invitation(study=expert.study, system=expert, label="attacker's expert")
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("ada", password="right-password-ada", is_staff=True)  # a researcher
    return {"participant": participant.pk, "invitation": invitation.pk, "token": invitation.token}


# Webhooks -------------------------------------------------------------------------------------------------
def signed_headers(body: bytes, *, secret: str = SECRET, timestamp: int | None = None) -> dict:
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = base64.b64encode(hmac.new(secret.encode(), stamp.encode() + body, hashlib.sha256).digest())
    return {
        "Content-Type": "application/json",
        "X-Prolific-Request-Signature": signature.decode(),
        "X-Prolific-Request-Timestamp": stamp,
    }


def webhook(
    base: str, body: bytes, *, secret: str = SECRET, event_id: str = "", sent_at: int | None = None, headers=None
):
    headers = dict(headers or signed_headers(body, secret=secret))
    if event_id:
        headers["X-Event-ID"] = event_id
    if sent_at is not None:
        headers["X-Timestamp"] = str(sent_at)
    return httpx.post(f"{base}/prolific/webhook/", content=body, headers=headers, timeout=30)


def said(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail", "")
    except ValueError:
        detail = response.text[:80]
    return f"{response.status_code} {str(detail)[:90]}"


def event(status: str) -> bytes:
    return json.dumps(
        {"resource_id": "sub1", "event_type": "submission.status.change", "participant_id": "pid1", "status": status}
    ).encode()


def webhook_attacks(base: str, ids: dict) -> None:
    from surveys.models import Participant, ProlificEvent

    def stored() -> int:
        return ProlificEvent.objects.count()

    before = stored()
    deep = b"[" * 100_000 + b"]" * 100_000
    response = webhook(base, deep, secret="wrong")
    report("webhook 100,000 deep, wrong signature", said(response), 400 <= response.status_code < 500)
    deep_small = b'{"a":' * 5_000 + b"1" + b"}" * 5_000
    response = webhook(base, deep_small, secret="wrong")
    report("webhook 5,000 deep (50 KB), wrong signature", said(response), response.status_code == 401)
    response = webhook(base, deep_small)
    report("webhook 5,000 deep, signed", said(response), response.status_code == 400)
    response = webhook(base, event("HACKED"), event_id="evt-unknown")
    report("webhook unknown status, signed", said(response), response.status_code == 400 and stored() == before)

    # Issue 35: a captured request resent within the 5 minutes with a new X-Event-ID and an X-Timestamp ten years
    # ahead used to be accepted and made the next genuine event "stale".
    now = int(time.time())
    captured = signed_headers(event("AWAITING REVIEW"), timestamp=now)
    webhook(base, event("AWAITING REVIEW"), headers=captured, event_id="evt-1", sent_at=now)
    forged = webhook(base, event("AWAITING REVIEW"), headers=captured, event_id="evt-2", sent_at=now + 10 * 365 * 86400)
    genuine = webhook(base, event("APPROVED"), headers=signed_headers(event("APPROVED"), timestamp=now + 1))
    status = Participant.objects.get(pk=ids["participant"]).prolific_status
    report(
        "webhook resent with new X-Event-ID, X-Timestamp +10 y",
        f"{said(forged)}; the next genuine event: {said(genuine)}; status {status}",
        forged.json().get("detail") == "duplicate"
        and genuine.json().get("detail") == "recorded"
        and status == "APPROVED",
    )
    response = webhook(base, event("RETURNED"), sent_at=now - 60)
    participant = Participant.objects.get(pk=ids["participant"])
    report(
        "webhook older event after a newer one",
        f"{said(response)}; status stays {participant.prolific_status}",
        response.json().get("detail") == "stale" and participant.prolific_status == "APPROVED",
    )


# Issue 35 ----------------------------------------------------------------------------------------------------
def issue_35_attacks(base: str) -> None:
    """Another team's Prolific study, internal addresses for LLM calls, a stranger locking a researcher out, a NUL
    in a link, and an answers CSV without limits: each refused."""
    from django.db import IntegrityError, transaction

    from llm_collect import client
    from surveys.models import Study
    from surveys.prolific.ownership import NotOurProlificStudy, link_prolific_study
    from surveys.services.answer_files import AnswerFileError, import_answers

    outsider = Study.objects.get(slug="attacks-writing")  # a draft of "another team"; the victim's STUDY_ID is st1
    try:
        link_prolific_study(study=outsider, prolific_id="st1")
        got, refused = "linked", False
    except NotOurProlificStudy as exc:
        got, refused = exc.messages[0], True
    try:
        with transaction.atomic():
            Study.objects.filter(pk=outsider.pk).update(prolific_study_id="st1")
        refused = False
    except IntegrityError:
        got += "; the database refuses it too"
    report("prolific: link another team's STUDY_ID", got[:110], refused)

    for url in ("http://169.254.169.254/latest/meta-data/", "http://127.0.0.2:6379/", "http://localhost:5432/"):
        target = client.Target(provider="openai-compatible", model="m", base_url=url)
        try:
            client.complete(target, system_prompt="S", user_prompt="U")
            got, refused = "called", False
        except client.DestinationRefused as exc:
            got, refused = str(exc), True
        except client.ClientError as exc:  # reached the network: the address was not refused
            got, refused = f"{type(exc).__name__}: {exc}", False
        report(f"LLM call without a key to {url.split('/')[2]}", got[:110], refused)

    with httpx.Client(base_url=base, timeout=30) as browser:

        def sign_in(username: str, password: str, address: str) -> httpx.Response:
            page = browser.get("/admin/login/", headers={"X-Real-IP": address})
            data = {"username": username, "password": password, "csrfmiddlewaretoken": CSRF.search(page.text).group(1)}
            return browser.post("/admin/login/?next=/admin/", data=data, headers={"X-Real-IP": address})

        for n in range(5):  # five wrong passwords from one address, then five from five others
            sign_in("ada", "wrong", "203.0.113.10")
            sign_in("ada", "wrong", f"203.0.113.{20 + n}")
        attacker = sign_in("ada", "right-password-ada", "203.0.113.10")
        browser.cookies.clear()
        rightful = sign_in("ada", "right-password-ada", "198.51.100.7")
    signed_in = rightful.status_code == 302 and rightful.headers.get("location") == "/admin/"
    report(
        "sign-in: strangers lock a researcher out",
        f"from the attacker's address {attacker.status_code}; ada from her own {rightful.status_code}",
        attacker.status_code == 429 and signed_in,
    )

    nul = httpx.get(f"{base}/s/attacks/", params={"PROLIFIC_PID": "a\x00b", "STUDY_ID": "st1", "SESSION_ID": "s"})
    report("NUL in PROLIFIC_PID", said(nul), nul.status_code == 400)

    header = "system,vignette,feature_1,weight_1,reason_1\n"
    for name, text in (
        ("a 200,000-column header", ",".join(f"c{n}" for n in range(200_000)) + "\nalpha\n"),
        ("a 200 KB cell", header + f'alpha,v1,honesty,100,"{"x" * 200_000}"\n'),
        ("2,000 rows", header + "s1,v1,honesty,100,because\n" * 2_000),
    ):
        started = time.perf_counter()
        try:
            import_answers(study=outsider, text=text)
            got, refused = "imported", False
        except AnswerFileError as exc:
            got, refused = exc.errors[0], len(exc.errors) == 1
        report(f"answers CSV: {name}", f"{time.perf_counter() - started:.2f} s: {got[:90]}", refused)


def judge_model_attack(base: str) -> None:
    """Issue 35: an owner of another study, with every model permission, repoints the victim team's judge model
    before its first run (their answers and key would then go to the attacker's server), or uses it on their own
    study. It does not exist for them: each page answers as for a missing object, and nothing changes."""
    from django.contrib.auth import get_user_model

    from llm_judging.models import JudgeModel, JudgingRun
    from surveys.models import Study, StudyMembership
    from surveys.services.teams import set_member

    victim = JudgeModel.objects.create(study=Study.objects.get(slug="attacks"), key="their-judge", provider="openai",
                                       model="gpt-4o", base_url="https://llm.victim.example/v1",
                                       api_key_env="OPENAI_API_KEY")  # fmt: skip
    mallory = get_user_model().objects.create_user("mallory", password="mallory-password-1", is_staff=True)
    own = Study.objects.get(slug="attacks-writing")
    set_member(study=own, user=mallory, role=StudyMembership.Role.OWNER)  # the owner group: every model permission
    change = f"/admin/llm_judging/judgemodel/{victim.pk}/change/"
    with httpx.Client(base_url=base, timeout=30, headers={"X-Real-IP": "192.0.2.66"}) as browser:
        page = browser.get("/admin/login/")
        login = {"username": "mallory", "password": "mallory-password-1"}
        browser.post("/admin/login/", data={**login, "csrfmiddlewaretoken": CSRF.search(page.text).group(1)})
        add_page = browser.get("/admin/llm_judging/judgemodel/add/")
        token = CSRF.search(add_page.text).group(1)
        listed = "their-judge" in browser.get("/admin/llm_judging/judgemodel/").text
        opened = browser.get(change)
        repoint = {"key": "their-judge", "provider": "openai", "model": "gpt-4o", "parameters": "{}",
                   "base_url": "https://attacker.example/v1", "api_key_env": "OPENAI_API_KEY"}  # fmt: skip
        posted = browser.post(change, data={**repoint, "csrfmiddlewaretoken": token})
        run = {"study": own.pk, "judges": victim.pk, "samples": 1, "orders": "one", "confirmed": "yes"}
        started = browser.post("/admin/llm_judging/judgingrun/add/", data={**run, "csrfmiddlewaretoken": token})
    victim.refresh_from_db()
    unchanged = victim.base_url == "https://llm.victim.example/v1" and not JudgingRun.objects.exists()
    signed_in = add_page.status_code == 200
    report(
        "judge model: repoint another team's",
        f"listed {listed}; page {opened.status_code}; POST {posted.status_code}; unchanged {unchanged}",
        signed_in and not listed and opened.status_code == 302 and posted.status_code == 302 and unchanged,
    )
    report(
        "judge model: use another team's in a run",
        f"{started.status_code} {'Select a valid choice' if 'Select a valid choice' in started.text else '?'}",
        signed_in and "Select a valid choice" in started.text and not JudgingRun.objects.exists(),
    )


# The expired invitation -----------------------------------------------------------------------------------
def expired_invitation_attack(base: str, ids: dict) -> None:
    from django.utils import timezone

    from surveys.models import Answer, Invitation

    with httpx.Client(base_url=base, follow_redirects=True, timeout=30) as browser:
        consent = browser.get(f"/r/attacks-writing/invite/{ids['token']}/")
        token = CSRF.search(consent.text).group(1)
        page = browser.post(str(consent.url.path), data={"agree": "yes", "csrfmiddlewaretoken": token})
        token = CSRF.search(page.text).group(1)
        # The page is open in the expert's browser; the invitation then expires (INVITATION_MAX_AGE_DAYS=14).
        Invitation.objects.filter(pk=ids["invitation"]).update(created_at=timezone.now() - timedelta(days=15))
        answer = {"feature_1": "Honesty", "weight_1": "100", "reason_1": "Trust.", "action": "Tell the truth."}
        response = browser.post(str(page.url.path), data={**answer, "csrfmiddlewaretoken": token})
    message = re.search(r"This invitation[^<]*", response.text)
    written = Answer.objects.filter(origin=Answer.Origin.RESPONDENT).count()
    report(
        "expert page POSTed after the invitation expired",
        f"{response.status_code} {message.group(0) if message else response.text[:60]!r}; answers stored {written}",
        response.status_code == 403 and written == 0,
    )


# Study files ------------------------------------------------------------------------------------------------
def study_file_attacks(directory: Path) -> None:
    """Through `manage.py import_study`, run in this process against the server's database."""
    from django.core.management import CommandError, call_command

    from surveys.models import Study

    base = judging_study_file(slug="attacks-file", systems=2, vignettes=2, repetitions=1, k=1)
    base["status"] = "draft"
    rate = {**base, "prolific": {**base["prolific"], "hourly_rate": 1e300}}
    many = {**base, "questions": [{"key": f"q{i}", "text": "?"} for i in range(100_000)]}
    large = {**base, "description": "x" * 6_000_000}
    for name, data in (("hourly_rate 1e300", rate), ("100,000 questions", many), ("a 6 MB file", large)):
        path = directory / "attack.study.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        started = time.perf_counter()
        try:
            call_command("import_study", str(path), stdout=io.StringIO())
            outcome, refused = "imported", False
        except CommandError as exc:
            outcome, refused = str(exc).splitlines()[1], True  # the line after "<file>: nothing was imported."
        except Exception as exc:  # a traceback is what this attack must never get
            outcome, refused = f"{type(exc).__name__}: {exc}", False
        seconds = time.perf_counter() - started
        written = Study.objects.filter(slug="attacks-file").exists()
        got = f"{seconds:.1f} s: {outcome[:90]}; study written: {written}"
        report(f"import_study {name}", got, refused and not written)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", help="a PostgreSQL server URL (no database); default: a temporary SQLite file")
    parser.add_argument("--database", default="mj_attacks", help="the throwaway PostgreSQL database's name")
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="mj-attacks-"))
    database = fresh_database(args.postgres, args.database) if args.postgres else f"sqlite:///{directory}/db.sqlite3"
    env = server_env(database)
    env.update(PROLIFIC_WEBHOOK_SECRET=SECRET, INVITATION_MAX_AGE_DAYS="14", LOG_LEVEL="ERROR")
    env.update(CLIENT_IP_HEADER="X-Real-IP", TRUSTED_PROXIES="1")  # as behind nginx: each client's own address
    setup_django(env)
    ids = prepare(directory)
    port = free_port()
    server = start_gunicorn(env, workers=2, port=port)
    try:
        base = f"http://127.0.0.1:{port}"
        print(f"server {base} on {'PostgreSQL' if args.postgres else 'SQLite'}, DEBUG off\n")
        webhook_attacks(base, ids)
        issue_35_attacks(base)
        judge_model_attack(base)
        expired_invitation_attack(base, ids)
        study_file_attacks(directory)
    finally:
        server.terminate()
        server.wait(timeout=30)
        if args.postgres:
            from django.db import connections

            connections.close_all()
            drop_database(args.postgres, args.database)
    failed = [name for name, _got, refused in RESULTS if not refused]
    print(f"\n{len(RESULTS) - len(failed)} of {len(RESULTS)} attacks refused" + (f"; OPEN: {failed}" if failed else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    main()
