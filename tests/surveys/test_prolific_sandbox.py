"""Issue 23.7: `manage.py prolific_sandbox` runs the Prolific stand-in on a fixed port for a local try."""

import io
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from django.core.management import call_command

from surveys.management.commands.prolific_sandbox import _finished_here
from surveys.models import Participant, ProlificEvent
from tests.conftest import make_study
from tests.fakes.prolific_server import FakeProlific


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.django_db(transaction=True)
def test_the_sandbox_answers_on_its_port_and_prints_the_settings_to_use():
    port, out = free_port(), io.StringIO()
    runner = threading.Thread(
        target=call_command, args=("prolific_sandbox",), kwargs={"port": port, "seconds": 4, "stdout": out}
    )
    runner.start()
    url = f"http://127.0.0.1:{port}/api/v1/studies/nothing-here/"
    for _ in range(50):  # until it listens
        try:
            answer = httpx.get(url, headers={"Authorization": "Token sandbox-prolific-token"})
            break
        except httpx.ConnectError:
            time.sleep(0.05)
    wrong = httpx.get(url, headers={"Authorization": "Token guessed"})
    runner.join(timeout=10)
    assert answer.status_code == 404
    assert wrong.status_code == 401
    printed = out.getvalue()
    assert f"PROLIFIC_API_URL=http://127.0.0.1:{port}/api/v1/" in printed
    assert "PROLIFIC_API_TOKEN=sandbox-prolific-token" in printed


@pytest.mark.django_db
def test_judges_who_finish_here_become_submissions_awaiting_review_there_once():
    study = make_study(prolific_study_id="c" * 24)
    for n, status in enumerate(["completed", "judging", "completed"]):
        Participant.objects.create(
            study=study, prolific_pid=f"{n:024x}", session_id=f"{100 + n:024x}", status=status, is_preview=n == 2
        )
    with FakeProlific() as sandbox:
        sandbox.add_study("c" * 24)
        assert sandbox.add_missing_submissions(_finished_here({"c" * 24})) == 1  # not the one judging, not the try
        assert sandbox.add_missing_submissions(_finished_here({"c" * 24})) == 0
        assert sandbox.submissions[f"{100:024x}"]["status"] == "AWAITING REVIEW"


SECRET = "whsec-sandbox-secret"


@pytest.fixture
def platform(live_server, settings):
    """The platform on a real local port, checking webhooks with SECRET; a live study with a judge who finished."""
    from surveys.services.lifecycle import go_live

    settings.PROLIFIC_WEBHOOK_SECRET = SECRET
    study = go_live(study=make_study(prolific_study_id="c" * 24, completion_code="DONE"))
    Participant.objects.create(study=study, prolific_pid="a" * 24, session_id="b" * 24, status="completed")
    return f"{live_server.url}/prolific/webhook/"


def test_the_sandbox_sends_a_signed_webhook_when_a_judge_finishes_and_the_platform_records_it(platform, monkeypatch):
    from tests.fakes import prolific_server

    class WithTheStudy(FakeProlific):  # as if the study's draft had been created from the admin
        def __enter__(self):
            super().__enter__().add_study("c" * 24)
            return self

    monkeypatch.setattr(prolific_server, "FakeProlific", WithTheStudy)
    out = io.StringIO()
    call_command("prolific_sandbox", port=free_port(), seconds=1, webhook_url=platform, stdout=out)

    participant = Participant.objects.get(prolific_pid="a" * 24)
    assert participant.prolific_status == "AWAITING REVIEW"
    assert participant.prolific_status_at is not None  # ordered by the sandbox's X-Timestamp
    assert ProlificEvent.objects.get().status == "AWAITING REVIEW"
    assert f"Webhook {'b' * 24} AWAITING REVIEW: recorded" in out.getvalue()
    assert f"PROLIFIC_WEBHOOK_SECRET={SECRET}" in out.getvalue()


def test_an_approval_in_the_sandbox_reaches_the_platform_as_a_webhook_in_order(platform):
    with FakeProlific() as sandbox:
        sandbox.add_submission("b" * 24, participant_id="a" * 24, study_id="c" * 24, status="AWAITING REVIEW")
        approved = httpx.post(
            f"{sandbox.url}submissions/{'b' * 24}/transition/",
            json={"action": "APPROVE"},
            headers={"Authorization": f"Token {sandbox.token}"},
        )
        assert approved.status_code == 200
        said = sandbox.send_status_changes(url=platform, secret=SECRET)
    assert said == [f"Webhook {'b' * 24} AWAITING REVIEW: recorded", f"Webhook {'b' * 24} APPROVED: recorded"]
    assert Participant.objects.get().prolific_status == "APPROVED"
    assert ProlificEvent.objects.count() == 2


def test_a_webhook_the_platform_cannot_verify_is_refused_and_one_it_cannot_reach_is_sent_again(platform):
    with FakeProlific() as sandbox:
        sandbox.add_submission("b" * 24, participant_id="a" * 24, study_id="c" * 24, status="AWAITING REVIEW")
        [refused] = sandbox.send_status_changes(url=platform, secret="not-the-platforms-secret")
        assert "refused with 401" in refused
        assert Participant.objects.get().prolific_status == ""
        sandbox.set_status("b" * 24, "APPROVED")
        [unreachable] = sandbox.send_status_changes(
            url=f"http://127.0.0.1:{free_port()}/prolific/webhook/", secret=SECRET
        )
        assert "not delivered" in unreachable
        assert sandbox.send_status_changes(url=platform, secret=SECRET) == [f"Webhook {'b' * 24} APPROVED: recorded"]
    assert Participant.objects.get().prolific_status == "APPROVED"


@pytest.mark.django_db(transaction=True)
def test_the_sandbox_keeps_running_when_the_database_fails_a_read(monkeypatch):
    """Issue 34: under a pilot's load the platform's database may refuse a read; the sandbox says so and goes on."""
    from django.db import OperationalError, connection

    from tests.fakes import prolific_server

    class WithTheStudy(FakeProlific):  # a study to look for, so the sandbox reads the database every round
        def __enter__(self):
            super().__enter__().add_study("c" * 24)
            return self

    monkeypatch.setattr(prolific_server, "FakeProlific", WithTheStudy)

    failures = []

    def locked_once(execute, sql, params, many, context):
        if not failures:
            failures.append(sql)
            raise OperationalError("database is locked")
        return execute(sql, params, many, context)

    out = io.StringIO()
    with connection.execute_wrapper(locked_once):
        call_command("prolific_sandbox", port=free_port(), seconds=2.5, webhook_url="", stdout=out)
    assert len(failures) == 1
    assert "Could not read the platform's database (database is locked): trying again in 2 s." in out.getvalue()


def test_ctrl_c_stops_the_sandbox_even_when_it_was_started_with_sigint_ignored():
    """A background job of a non-interactive shell starts with SIGINT ignored: Ctrl-C (SIGINT) must still stop it."""
    port = free_port()
    sandbox = subprocess.Popen(
        [sys.executable, "manage.py", "prolific_sandbox", "--port", str(port), "--webhook-url", ""],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        for _ in range(200):  # until it listens
            try:
                httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        sandbox.send_signal(signal.SIGINT)
        out = sandbox.communicate(timeout=30)[0]
    finally:
        if sandbox.poll() is None:
            sandbox.kill()
    assert sandbox.returncode == 0, out
