"""Prolific's webhooks: the signature check, a stable event id, and applying a verified event."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import logging
import math
import time

from .errors import InvalidWebhook, WebhookNotConfigured, WebhookRefused
from .statuses import SUBMISSION_STATUS_CHANGE, Applied, ParticipantMismatch, apply_submission_status

log = logging.getLogger(__package__)

WEBHOOK_TOLERANCE_SECONDS = 5 * 60


def sign_webhook(*, body: bytes, timestamp: str, secret: str) -> str:
    """Prolific's signature: base64 of HMAC-SHA256 over the timestamp followed by the body."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def verify_webhook(*, body: bytes, timestamp: str, signature: str, secret: str, now: float | None = None) -> None:
    if not secret:
        raise WebhookNotConfigured("PROLIFIC_WEBHOOK_SECRET is not set: webhooks cannot be verified.")
    if not timestamp or not signature:
        raise InvalidWebhook("Missing X-Prolific-Request-Timestamp or X-Prolific-Request-Signature header.")
    try:
        sent_at = float(timestamp)
    except ValueError as exc:
        raise InvalidWebhook("X-Prolific-Request-Timestamp is not a UNIX timestamp.") from exc
    if not math.isfinite(sent_at):  # nan compares false with everything: it would pass the freshness check
        raise InvalidWebhook("X-Prolific-Request-Timestamp is not a finite UNIX timestamp.")
    now = time.time() if now is None else now
    if abs(now - sent_at) > WEBHOOK_TOLERANCE_SECONDS:
        raise InvalidWebhook("The webhook timestamp is more than 5 minutes from our clock (stale or replayed).")
    candidates = [body]
    with contextlib.suppress(ValueError):  # Prolific's own example signs json.dumps of the parsed body; accept it too
        candidates.append(json.dumps(json.loads(body)).encode())
    for candidate in candidates:
        if hmac.compare_digest(sign_webhook(body=candidate, timestamp=timestamp, secret=secret), signature):
            return
    raise InvalidWebhook("The webhook signature does not match.")


def webhook_event_id(payload: dict) -> str:
    """Prolific's event id when the payload has one; otherwise the event itself, as a digest.

    A submission reaches each status once, so the same (type, submission, status) is a repeat.
    """
    for key in ("event_id", "id"):
        if payload.get(key):
            return str(payload[key])[:128]
    key = "|".join(str(payload.get(k, "")) for k in ("event_type", "resource_id", "status"))
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def receive_webhook_event(*, payload: dict) -> Applied:
    """A verified webhook: apply submission status changes once; other event types are ignored.

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
            event_id=webhook_event_id(payload),
            payload=payload,
        )
    except ParticipantMismatch as exc:
        raise WebhookRefused(f"{exc} Not applied.") from exc
