"""Issue 23.7: `manage.py prolific_sandbox` runs the Prolific stand-in on a fixed port for a local try."""

import io
import socket
import threading
import time

import httpx
import pytest
from django.core.management import call_command

from surveys.management.commands.prolific_sandbox import _finished_here
from surveys.models import Participant
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
