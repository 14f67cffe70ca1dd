"""A small client for Prolific's API v1: the only surveys module that imports httpx.

Endpoint shapes follow docs.prolific.com (API reference, Submissions):
- GET  studies/{id}/submissions/              list a study's submissions (paginated, `_links.next.href`)
- POST submissions/{id}/transition/           {"action": "APPROVE"|"REJECT", "message", "rejection_category"}
- POST submissions/bulk-approve/              {"study_id", "participant_ids"} or {"submission_ids"}
- POST submissions/{id}/request-return/       {"request_return_reasons": [...]}
- POST studies/                                create a draft study (the payload: surveys/prolific/drafts/)
- GET  studies/{id}/                           a study, with its status, total_available_places, places_taken
- PATCH studies/{id}/                          change a draft; once published only total_available_places (up)
- POST studies/{id}/transition/                {"action": "PUBLISH"}
- GET  filters/                                the filters a study may use, with their choice ids (paginated)
- POST submissions/bonus-payments/             set up bonuses: {"study_id", "csv_bonuses": "<pid>,<amount>\\n..."}
                                               (amounts in pounds or dollars); answers its id, amount, fees, vat
- POST bulk-bonus-payments/{id}/pay/           pay them: NOT idempotent, a second call pays again
Every request carries `Authorization: Token <PROLIFIC_API_TOKEN>` and an explicit timeout.

Errors become two exceptions, classified by moraljudge/http.py as for the LLM providers: `Retryable`
(timeouts, connection errors, 408/409/425/429, 5xx; carries the server's Retry-After) and `Permanent` (any other 4xx, or no token configured). Short Retry-After
waits are honoured here, a few times; longer ones are left to the caller (a Celery retry).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from django.conf import settings

from moraljudge import http

TIMEOUT, CONNECT_TIMEOUT = 20.0, 5.0
MAX_ATTEMPTS = 3  # one call plus two retries for short Retry-After waits
MAX_INLINE_WAIT = 10.0  # seconds; a longer Retry-After is the caller's to schedule
MAX_PAGES = 1000

# Prolific's rejection categories (transition endpoint, `rejection_category`).
REJECTION_CATEGORIES = (
    "TOO_QUICKLY",
    "TOO_SLOWLY",
    "FAILED_INSTRUCTIONS",
    "INCOMP_LONGITUDINAL",
    "FAILED_CHECK",
    "LOW_EFFORT",
    "MALINGERING",
    "NO_CODE",
    "BAD_CODE",
    "NO_DATA",
    "UNSUPP_DEVICE",
    "OTHER",
)
MIN_REJECTION_MESSAGE = 100  # Prolific refuses shorter rejection messages


class ProlificError(Exception):
    """Any failure talking to Prolific."""

    def __init__(self, message: str, *, status_code: int | None = None, body: Any = None):
        super().__init__(message)
        self.status_code = status_code
        self.body = body


class Retryable(ProlificError):
    """Worth trying again later: a timeout, a connection error, or a status moraljudge.http calls retryable."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs):
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class Permanent(ProlificError):
    """Trying again cannot help: any other 4xx, or missing configuration."""


class NotConfigured(Permanent):
    """PROLIFIC_API_TOKEN (or the API URL) is not set."""


@dataclass(frozen=True)
class Submission:
    id: str
    participant_id: str
    status: str
    study_id: str = ""
    study_code: str = ""
    started_at: str | None = None
    completed_at: str | None = None
    raw: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, data: dict) -> Submission:
        return cls(
            id=str(data.get("id") or ""),
            # The list endpoint says participant_id; the detail endpoint says participant.
            participant_id=str(data.get("participant_id") or data.get("participant") or ""),
            status=str(data.get("status") or ""),
            study_id=str(data.get("study_id") or ""),
            study_code=str(data.get("study_code") or data.get("entered_code") or ""),
            started_at=data.get("started_at"),
            completed_at=data.get("completed_at"),
            raw=data,
        )


def check_configured() -> None:
    """Raise NotConfigured, naming the setting, unless a token and the API URL are set."""
    if not getattr(settings, "PROLIFIC_API_TOKEN", ""):
        raise NotConfigured(
            "PROLIFIC_API_TOKEN is not set: create an API token in Prolific (Settings → API tokens) "
            "and put it in the PROLIFIC_API_TOKEN environment variable."
        )
    if not getattr(settings, "PROLIFIC_API_URL", ""):
        raise NotConfigured("PROLIFIC_API_URL is not set (normally https://api.prolific.com/api/v1/).")


def make_client(*, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """The one place an httpx.Client is built (tests may pass a MockTransport)."""
    check_configured()
    token, base_url = settings.PROLIFIC_API_TOKEN, settings.PROLIFIC_API_URL
    return http.build_client(
        base_url=base_url.rstrip("/") + "/",
        headers={"Authorization": f"Token {token}", "Accept": "application/json"},
        timeout=TIMEOUT,
        connect_timeout=CONNECT_TIMEOUT,
        transport=transport,
    )


def _detail(response: httpx.Response) -> tuple[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return response.text[:300], response.text
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        detail = error.get("detail") or error.get("title") or error
        return _readable(detail)[:300], body
    return str(body)[:300], body


def _readable(detail: Any) -> str:
    """Prolific's validation errors come as {"field": ["message", ...]}: say them as "field: message"."""
    if isinstance(detail, dict):
        return "; ".join(f"{name}: {_readable(value)}" for name, value in detail.items())
    if isinstance(detail, list):
        return " ".join(_readable(item) for item in detail)
    return str(detail)


def _send_once(client: httpx.Client, method: str, url: str, body: dict | None) -> Any:
    what = f"Prolific {method} {url}"
    try:
        response = client.request(method, url, json=body)
    except httpx.TimeoutException as exc:
        raise Retryable(f"{what} timed out ({exc.__class__.__name__}).") from exc
    except httpx.TransportError as exc:
        raise Retryable(f"{what} failed to connect: {exc}.") from exc
    if http.is_failure(response.status_code) and http.is_retryable_status(response.status_code):
        detail, payload = _detail(response)
        raise Retryable(
            f"{what} answered {response.status_code}: {detail}",
            retry_after=http.retry_after_seconds(response.headers),
            status_code=response.status_code,
            body=payload,
        )
    if response.status_code >= 400:
        detail, payload = _detail(response)
        hint = " (check PROLIFIC_API_TOKEN)" if response.status_code in (401, 403) else ""
        raise Permanent(
            f"{what} answered {response.status_code}{hint}: {detail}",
            status_code=response.status_code,
            body=payload,
        )
    if not response.content:
        return {}
    try:
        return response.json()
    except ValueError:
        return {"detail": response.text}


def _call(
    method: str, url: str, *, body: dict | None = None, client: httpx.Client | None = None, idempotent: bool = True
) -> Any:
    """One request, tried again on short waits. A call that is not idempotent (creating a study, publishing
    it) is tried again only after a 429, which Prolific answers before doing anything: a timeout or a 5xx
    may come after the work was done, and a second POST would make a second study."""
    own = client is None
    client = client or make_client()
    try:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                return _send_once(client, method, url, body)
            except Retryable as exc:
                wait = exc.retry_after if exc.retry_after is not None else 0.5 * attempt
                unsafe = not idempotent and exc.status_code != 429
                if unsafe or attempt == MAX_ATTEMPTS or wait > MAX_INLINE_WAIT:
                    raise
                time.sleep(wait)
    finally:
        if own:
            client.close()
    raise AssertionError("unreachable")  # pragma: no cover


def list_submissions(study_id: str, *, client: httpx.Client | None = None) -> list[Submission]:
    """Every submission of a Prolific study, following the pagination links."""
    if not study_id:
        raise Permanent("The study has no Prolific study id: set it in the study's Prolific settings.")
    own = client is None
    client = client or make_client()
    try:
        submissions: list[Submission] = []
        url: str | None = f"studies/{study_id}/submissions/"
        for _ in range(MAX_PAGES):
            if not url:
                break
            page = _call("GET", url, client=client)
            submissions += [Submission.from_json(item) for item in page.get("results", [])]
            url = _next_link(page)
        return submissions
    finally:
        if own:
            client.close()


def _next_link(page: dict) -> str | None:
    links = page.get("_links") or {}
    nxt = links.get("next")
    if isinstance(nxt, dict):
        return nxt.get("href") or None
    return nxt or None


def approve_submission(submission_id: str, *, client: httpx.Client | None = None) -> dict:
    return _call("POST", f"submissions/{submission_id}/transition/", body={"action": "APPROVE"}, client=client)


def reject_submission(
    submission_id: str, *, message: str, rejection_category: str, client: httpx.Client | None = None
) -> dict:
    if rejection_category not in REJECTION_CATEGORIES:
        raise Permanent(f"'{rejection_category}' is not one of Prolific's rejection categories.")
    if len(message) < MIN_REJECTION_MESSAGE:
        raise Permanent(f"Prolific needs a rejection message of at least {MIN_REJECTION_MESSAGE} characters.")
    body = {"action": "REJECT", "message": message, "rejection_category": rejection_category}
    return _call("POST", f"submissions/{submission_id}/transition/", body=body, client=client)


def bulk_approve(
    *,
    submission_ids: list[str] | None = None,
    study_id: str | None = None,
    participant_ids: list[str] | None = None,
    client: httpx.Client | None = None,
) -> dict:
    """Approve many submissions in one call: by submission ids (Prolific's advice), or a study's participants."""
    if submission_ids:
        body: dict = {"submission_ids": list(submission_ids)}
    elif study_id and participant_ids:
        body = {"study_id": study_id, "participant_ids": list(participant_ids)}
    else:
        raise ValueError("bulk_approve needs submission_ids, or study_id with participant_ids.")
    return _call("POST", "submissions/bulk-approve/", body=body, client=client)


def request_return(submission_id: str, *, reasons: list[str], client: httpx.Client | None = None) -> dict:
    """Ask the participant to return the submission; Prolific writes the message around the reasons."""
    if not reasons:
        raise ValueError("request_return needs at least one reason.")
    body = {"request_return_reasons": list(reasons)}
    return _call("POST", f"submissions/{submission_id}/request-return/", body=body, client=client)


def get_submission(submission_id: str, *, client: httpx.Client | None = None) -> dict:
    """One submission as Prolific holds it: its ``study_id`` and ``participant`` (the participant's id)."""
    return _call("GET", f"submissions/{submission_id}/", client=client)


def get_study(study_id: str, *, client: httpx.Client | None = None) -> dict:
    return _call("GET", f"studies/{study_id}/", client=client)


def create_study(payload: dict, *, client: httpx.Client | None = None) -> dict:
    """Create a draft (UNPUBLISHED) study; Prolific answers with the study, its `id` included."""
    return _call("POST", "studies/", body=payload, client=client, idempotent=False)


def update_study(study_id: str, changes: dict, *, client: httpx.Client | None = None) -> dict:
    """PATCH the fields given: any of a draft's; of a published study only total_available_places (up)."""
    return _call("PATCH", f"studies/{study_id}/", body=changes, client=client)


def publish_study(study_id: str, *, client: httpx.Client | None = None) -> dict:
    return _call("POST", f"studies/{study_id}/transition/", body={"action": "PUBLISH"}, client=client, idempotent=False)


def list_filters(*, client: httpx.Client | None = None) -> list[dict]:
    """Prolific's filters (filter_id, type, choices {id: label}, min, max), following the pagination links."""
    own = client is None
    client = client or make_client()
    try:
        filters: list[dict] = []
        url: str | None = "filters/"
        for _ in range(MAX_PAGES):
            if not url:
                break
            page = _call("GET", url, client=client)
            filters += [item for item in page.get("results", []) if isinstance(item, dict)]
            url = _next_link(page)
        return filters
    finally:
        if own:
            client.close()


def set_up_bonuses(study_id: str, csv_bonuses: str, *, client: httpx.Client | None = None) -> dict:
    """Set up (not pay) bonuses; Prolific answers the bulk payment's id, amount, fees and vat in pence or cents.
    Not tried again after a timeout: a second set-up would only leave an unpaid one behind, but say so."""
    body = {"study_id": study_id, "csv_bonuses": csv_bonuses}
    return _call("POST", "submissions/bonus-payments/", body=body, client=client, idempotent=False)


def pay_bonuses(bulk_id: str, *, client: httpx.Client | None = None) -> Any:
    """Pay a set-up bulk bonus payment. Prolific: not idempotent (each call pays again), so never retried here
    except after a 429, which Prolific answers before doing anything."""
    return _call("POST", f"bulk-bonus-payments/{bulk_id}/pay/", body={}, client=client, idempotent=False)
