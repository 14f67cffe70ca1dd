"""How long a provider asked us to wait before the next request, wherever it said it.

In order: ``retry-after-ms`` and ``Retry-After`` (seconds or an HTTP date; moraljudge/http.py), Gemini's
``google.rpc.RetryInfo.retryDelay`` in the error body (its 429s carry no header), and the rate-limit reset
headers (OpenAI's ``x-ratelimit-reset-requests`` / ``-tokens`` as durations such as ``6m0s``, Anthropic's
``anthropic-ratelimit-*-reset`` as RFC 3339 times) of the buckets that ran out. The value may be huge or
infinite (``Retry-After: inf``): the caller bounds it (calls/config.py, ``max_provider_wait_seconds``).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import httpx

from moraljudge import http

DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def provider_wait(headers: httpx.Headers | dict, body: str = "", *, now: datetime | None = None) -> float | None:
    """The seconds to wait, or None when the provider did not say."""
    headers = httpx.Headers(headers)
    for wait in (
        http.retry_after_seconds(headers, now=now),
        retry_info_delay(body),
        rate_limit_reset(headers, now=now),
    ):
        if wait is not None:
            return wait
    return None


def retry_info_delay(body: str) -> float | None:
    """Gemini's ``error.details[] @type google.rpc.RetryInfo`` ``retryDelay`` ("37s", "1.5s"), or None."""
    try:
        details = (json.loads(body or "{}").get("error") or {}).get("details") or []
    except (ValueError, AttributeError):
        return None
    for detail in details if isinstance(details, list) else []:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            return duration_seconds(str(detail.get("retryDelay", "")))
    return None


def duration_seconds(text: str) -> float | None:
    """A Go-style or protobuf duration ("1.5s", "6m0s", "20ms", "1h2m") in seconds, or None."""
    text = text.strip()
    parts = DURATION.findall(text)
    if not parts or "".join(n + unit for n, unit in parts) != text:
        return None
    return sum(float(n) * UNIT_SECONDS[unit] for n, unit in parts)


def rate_limit_reset(headers: httpx.Headers, *, now: datetime | None = None) -> float | None:
    """When the exhausted rate-limit bucket refills: the latest reset among those whose remaining is 0, or the
    earliest of all resets when none says it is empty."""
    resets, empty = [], []
    for name, value in headers.items():
        remaining = remaining_header(name.lower())
        if remaining is None:
            continue
        seconds = duration_seconds(value)
        if seconds is None:
            seconds = seconds_until(value, now=now)
        if seconds is None:
            continue
        resets.append(seconds)
        if headers.get(remaining, "").strip() == "0":
            empty.append(seconds)
    if empty:
        return max(empty)
    return min(resets) if resets else None


def remaining_header(name: str) -> str | None:
    """The "remaining" header beside a reset header: OpenAI's x-ratelimit-reset-<bucket> has
    x-ratelimit-remaining-<bucket>, Anthropic's anthropic-ratelimit-<bucket>-reset has …-<bucket>-remaining."""
    if name.startswith("x-ratelimit-reset-"):
        return "x-ratelimit-remaining-" + name.removeprefix("x-ratelimit-reset-")
    if "ratelimit" in name and name.endswith("-reset"):
        return name.removesuffix("-reset") + "-remaining"
    return None


def seconds_until(text: str, *, now: datetime | None = None) -> float | None:
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
