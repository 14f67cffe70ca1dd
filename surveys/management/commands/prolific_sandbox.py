"""A local Prolific to try the whole cycle: the project's stand-in (tests/fakes/prolific_server.py) on a fixed port.

Like Prolific, it sends a signed webhook (X-Prolific-Request-Signature over the timestamp and the body, with
X-Event-ID and X-Timestamp) to the platform for every change of a submission's status.
"""

import secrets
import signal
import threading
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, close_old_connections

from surveys.models import Participant

# Participants who finished here become submissions awaiting review there, as on Prolific.
FINISHED: dict[str, str] = {
    Participant.Status.COMPLETED: "AWAITING REVIEW",
    Participant.Status.FAILED_ATTENTION: "AWAITING REVIEW",
    Participant.Status.NO_CONSENT: "RETURNED",
}
WEBHOOK_URL = "http://127.0.0.1:8000/prolific/webhook/"  # make run's server


class Command(BaseCommand):
    help = "Run a local stand-in for Prolific's API on a fixed port and print the settings that point MoralJudge at it."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8765)
        parser.add_argument("--token", default="sandbox-prolific-token")
        parser.add_argument("--seconds", type=float, default=None, help="Stop after this long (default: until Ctrl-C).")
        parser.add_argument("--webhook-url", default=WEBHOOK_URL, help="Where status changes are sent ('' for none).")

    def handle(self, *args, port: int, token: str, seconds: float | None, webhook_url: str, **options):
        try:
            from tests.fakes.prolific_server import FakeProlific  # a development tool: run from the checkout
        except ImportError as exc:
            raise CommandError("The Prolific stand-in lives in tests/fakes/: run this from a checkout.") from exc
        try:
            sandbox = FakeProlific(token=token, port=port, page_size=100).__enter__()
        except OSError as exc:
            raise CommandError(f"Port {port} on 127.0.0.1 is in use: choose another with --port.") from exc
        # The platform checks webhooks with its PROLIFIC_WEBHOOK_SECRET: the same one, or a new one to put in .env.
        secret = settings.PROLIFIC_WEBHOOK_SECRET or secrets.token_urlsafe(32)
        self.stdout.write(
            f"A Prolific stand-in answers on {sandbox.url}\nPut these in .env and restart make run:\n"
            f"PROLIFIC_API_URL={sandbox.url}\nPROLIFIC_API_TOKEN={token}\nPROLIFIC_WEBHOOK_SECRET={secret}\n"
            "Studies created from the admin are drafts here; participants who finish become submissions "
            "awaiting review (every 2 s), and every change of a submission's status is sent as a signed webhook to "
            f"{webhook_url or '(nowhere: --webhook-url is empty)'}. Ctrl-C stops it; its state is kept in memory only."
        )
        self.stdout.flush()
        # Ctrl-C stops it even when started with SIGINT ignored (a background job of a non-interactive shell,
        # a runner that ignores it): Python then raises no KeyboardInterrupt and the loop below never ends.
        if threading.current_thread() is threading.main_thread():  # only the main thread may set a handler
            signal.signal(signal.SIGINT, signal.default_int_handler)
        deadline = None if seconds is None else time.monotonic() + seconds
        try:
            while deadline is None or time.monotonic() < deadline:
                try:
                    added = sandbox.add_missing_submissions(_finished_here(set(sandbox.studies)))
                except DatabaseError as exc:  # busy or restarted under a pilot's load: look again next round
                    close_old_connections()
                    self.stdout.write(f"Could not read the platform's database ({exc}): trying again in 2 s.")
                    added = 0
                if added:
                    self.stdout.write(f"{added} new submission(s) awaiting review.")
                for line in sandbox.send_status_changes(url=webhook_url, secret=secret) if webhook_url else []:
                    self.stdout.write(line)
                time.sleep(2 if deadline is None else min(2, max(0, deadline - time.monotonic())))
        except KeyboardInterrupt:
            pass
        finally:
            sandbox.__exit__(None, None, None)


def _finished_here(prolific_ids: set[str]) -> list[tuple[str, str, str, str]]:
    """Participants of the sandbox's studies who ended here, as (session, participant, study, status)."""
    rows = Participant.objects.filter(
        study__prolific_study_id__in=prolific_ids, is_preview=False, status__in=list(FINISHED)
    ).values_list("session_id", "prolific_pid", "study__prolific_study_id", "status")
    return [(session, pid, study_id, FINISHED[status]) for session, pid, study_id, status in rows]
