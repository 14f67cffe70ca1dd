"""Prolific's webhooks: the signature check on the raw bytes, then the event read, deduplicated and applied in order.

Order of checks (README, Prolific section): size (before reading), signature over the raw bytes (before any parsing), then
the JSON (nesting depth scanned first, without recursion), the fields, the status. Prolific's headers:
X-Prolific-Request-Signature / X-Prolific-Request-Timestamp sign the request (timestamp + body); a timestamp more than
5 minutes from our clock is refused. Only what the signature covers is trusted:

- the event's identity (the dedupe key) is a digest of the signed body's content, so a captured body resent, with
  any X-Event-ID or spacing, is a duplicate; X-Event-ID is not read;
- the order key is X-Timestamp (when the status changed, unsigned) only when it is no later than the signed
  timestamp, else the signed timestamp: no header can date an event after it was signed, so none can make a
  genuine later event "stale".
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import math
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from ..services.shape_basics import is_storable
from .errors import InvalidWebhook, MalformedWebhook, UnknownSubmissionStatus, WebhookNotConfigured, WebhookRefused
from .statuses import SUBMISSION_STATUS_CHANGE, Applied, ParticipantMismatch, SubmissionStatus, apply_submission_status

log = logging.getLogger(__package__)

WEBHOOK_TOLERANCE_SECONDS = 5 * 60
WEBHOOK_MAX_BYTES = 64 * 1024  # a Prolific event is a few hundred bytes
WEBHOOK_MAX_DEPTH = 8  # Prolific's events are flat objects
KNOWN_STATUSES = frozenset(s.value for s in SubmissionStatus if s.value)
# The event's fields as Prolific sends them: name -> (required, longest).
FIELDS = {"event_type": (True, 64), "resource_id": (True, 64), "status": (False, 24), "participant_id": (False, 64)}


def sign_webhook(*, body: bytes, timestamp: str, secret: str) -> str:
    """Prolific's signature: base64 of HMAC-SHA256 over the timestamp followed by the body."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verify_webhook(*, body: bytes, timestamp: str, signature: str, secret: str, now: float | None = None) -> None:
    """Raises unless `signature` signs `timestamp + body` with `secret` and the timestamp is fresh.

    The raw bytes are checked first. Prolific's own example signs `json.dumps` of the parsed body, so a body sent with
    other spacing is also tried re-serialised, but only a small, shallow one: nothing deep is ever parsed unsigned.
    """
    if not secret:
        raise WebhookNotConfigured("PROLIFIC_WEBHOOK_SECRET is not set: webhooks cannot be verified.")
    if not timestamp or not signature:
        raise InvalidWebhook("Missing X-Prolific-Request-Timestamp or X-Prolific-Request-Signature header.")
    sent_at = _unix_seconds(timestamp, "X-Prolific-Request-Timestamp", InvalidWebhook)
    now = time.time() if now is None else now
    if abs(now - sent_at) > WEBHOOK_TOLERANCE_SECONDS:
        raise InvalidWebhook("The webhook timestamp is more than 5 minutes from our clock (stale or replayed).")
    given = signature.encode("utf-8", "replace")  # as bytes: compare_digest refuses non-ASCII text with a TypeError
    if hmac.compare_digest(sign_webhook(body=body, timestamp=timestamp, secret=secret).encode(), given):
        return
    reserialised = _reserialised(body)
    if reserialised is not None and hmac.compare_digest(
        sign_webhook(body=reserialised, timestamp=timestamp, secret=secret).encode(), given
    ):
        return
    raise InvalidWebhook("The webhook signature does not match.")


def _reserialised(body: bytes) -> bytes | None:
    if len(body) > WEBHOOK_MAX_BYTES or json_depth(body) > WEBHOOK_MAX_DEPTH:
        return None
    try:
        return json.dumps(json.loads(body)).encode()
    except (ValueError, RecursionError):
        return None


def json_depth(body: bytes) -> int:
    """How deeply `body`'s arrays and objects nest, by a linear scan that skips strings (no recursion, no parse)."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in body:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return deepest


def _unix_seconds(value: str, header: str, error: type[Exception]) -> float:
    try:
        seconds = float(value)
    except ValueError as exc:
        raise error(f"{header} is not a UNIX timestamp.") from exc
    if not math.isfinite(seconds) or not 0 <= seconds < 1e11:  # nan would pass any comparison
        raise error(f"{header} is not a finite UNIX timestamp in range.")
    return seconds


@dataclass(frozen=True)
class WebhookEvent:
    """A signed event, read and checked: what `receive_webhook_event` applies."""

    payload: dict
    event_id: str | None = None
    sent_at: datetime | None = None


def read_event(*, body: bytes, headers) -> WebhookEvent:
    """The event in a body whose signature was verified. Raises MalformedWebhook or UnknownSubmissionStatus."""
    if json_depth(body) > WEBHOOK_MAX_DEPTH:
        raise MalformedWebhook(f"The body nests deeper than {WEBHOOK_MAX_DEPTH} levels: not a Prolific event.")
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise MalformedWebhook("The body is not JSON.") from exc
    if not isinstance(payload, dict):
        raise MalformedWebhook("The body must be a JSON object.")
    if not _storable(payload):
        raise MalformedWebhook("The body holds text no database can store (a NUL character or a lone surrogate).")
    for name, (required, longest) in FIELDS.items():
        value = payload.get(name, "")
        if not isinstance(value, str) or len(value) > longest or (required and not value):
            raise MalformedWebhook(f"'{name}' must be a string of 1 to {longest} characters.")
    if payload["event_type"] == SUBMISSION_STATUS_CHANGE:
        status = payload.get("status", "").strip().upper()
        if not status:
            raise MalformedWebhook("'status': a submission status change needs a status.")
        if status not in KNOWN_STATUSES:
            raise UnknownSubmissionStatus(
                f"Unknown submission status {status!r}: expected one of {', '.join(sorted(KNOWN_STATUSES))}. "
                "Nothing was stored."
            )
    return WebhookEvent(payload=payload, event_id=webhook_event_id(payload), sent_at=_sent_at(headers))


def _storable(payload: dict) -> bool:
    """Every key and text in the (shallow, small) payload can be stored by PostgreSQL as well as SQLite."""
    pending: list = [payload]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str) and not is_storable(value):
            return False
    return True


def _sent_at(headers) -> datetime:
    """When the event happened: X-Timestamp, but never later than the signed timestamp (whole seconds, so + 1)."""
    signed = _unix_seconds(
        headers.get("X-Prolific-Request-Timestamp", ""), "X-Prolific-Request-Timestamp", InvalidWebhook
    )
    value = headers.get("X-Timestamp", "")
    said = _unix_seconds(value, "X-Timestamp", MalformedWebhook) if value else signed
    return datetime.fromtimestamp(min(said, signed + 1), tz=UTC)


def webhook_event_id(payload: dict) -> str:
    """The dedupe key: a digest of the signed event's content (key order and spacing aside), never a header.

    A submission reaches each status once, so the same content is a repeat (a redelivery, or a replay).
    """
    content = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


def receive_webhook(*, body: bytes, headers, secret: str, now: float | None = None) -> Applied:
    """A request as received: verify the raw bytes, read the event, apply it once and in order."""
    verify_webhook(
        body=body,
        timestamp=headers.get("X-Prolific-Request-Timestamp", ""),
        signature=headers.get("X-Prolific-Request-Signature", ""),
        secret=secret,
        now=now,
    )
    event = read_event(body=body, headers=headers)
    return receive_webhook_event(payload=event.payload, event_id=event.event_id, sent_at=event.sent_at)


def receive_webhook_event(*, payload: dict, event_id: str | None = None, sent_at: datetime | None = None) -> Applied:
    """A verified event: apply submission status changes once; other event types are ignored.

    `event_id` is the digest of the signed content (computed when not given); `sent_at` when it happened (see the
    module's docstring): an event older than the status already applied is recorded but changes nothing ("stale").
    Raises WebhookRefused (the view answers 400) when the event names another participant than the one who entered with
    the submission; nothing is recorded, and it is logged.
    """
    if payload.get("event_type") != SUBMISSION_STATUS_CHANGE:
        return Applied("ignored")
    try:
        return apply_submission_status(
            study=None,
            session_id=payload["resource_id"],
            participant_id=payload.get("participant_id", ""),
            status=payload["status"],
            event_id=event_id or webhook_event_id(payload),
            payload=payload,
            sent_at=sent_at,
        )
    except ParticipantMismatch as exc:
        raise WebhookRefused(f"{exc} Not applied.") from exc
