"""One HTTP layer for every outside service (LLM providers, Prolific): how clients are built, which failures
are worth another try, and how long the server asked us to wait.

Retryable statuses follow what the providers' own SDKs retry (openai-python, anthropic-sdk-python) and the RFCs:
- 408 Request Timeout: the server gave up waiting for us; the same request may succeed.
- 409 Conflict: OpenAI and Anthropic send it for a transient lock on their side and their SDKs retry it.
- 425 Too Early (RFC 8470): "retry after the handshake", by definition retryable.
- 429 Too Many Requests and every 5xx (Anthropic's 529 "overloaded" included).
Every other 4xx is permanent: the same request will be refused again.

Clients trust the environment (``trust_env=True``): a server that reaches the internet only through an egress
proxy (HTTPS_PROXY, NO_PROXY) or a private CA (SSL_CERT_FILE) works without a setting of ours; not for LLM calls,
whose client brings its own address-checking transport, for which httpx reads no proxy (llm_collect/keys.py). httpx 0.28 no
longer reads ~/.netrc, so no credentials come from the environment. Redirects are never followed: a provider
that redirects a paid POST is misconfigured, and following it could send the key to another host.
"""

from __future__ import annotations

import email.utils
from datetime import UTC, datetime

import httpx

USER_AGENT = "moraljudge/1"
RETRYABLE_4XX = frozenset({408, 409, 425, 429})


def is_retryable_status(status: int) -> bool:
    """True for a failure another identical request may get past; False for one it cannot (other 4xx)."""
    return status in RETRYABLE_4XX or status >= 500


def is_failure(status: int) -> bool:
    return status >= 400


def retry_after_seconds(headers: httpx.Headers | dict, *, now: datetime | None = None) -> float | None:
    """How long the server asked us to wait, in seconds, or None if it did not say.

    Reads OpenAI's ``retry-after-ms`` first (finer), then ``Retry-After`` as delta-seconds or an HTTP date
    (RFC 9110 section 10.2.3). A date in the past means "now" (0).
    """
    headers = httpx.Headers(headers)
    if value := headers.get("retry-after-ms"):
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def build_client(
    *,
    timeout: float | httpx.Timeout,
    connect_timeout: float = 10.0,
    base_url: str = "",
    headers: dict | None = None,
    transport: httpx.BaseTransport | None = None,
) -> httpx.Client:
    """The one way an httpx.Client is made: explicit timeouts (a number or an httpx.Timeout), no redirects."""
    if not isinstance(timeout, httpx.Timeout):
        timeout = httpx.Timeout(timeout, connect=min(connect_timeout, timeout))
    return httpx.Client(
        base_url=base_url,
        timeout=timeout,
        transport=transport,
        follow_redirects=False,
        trust_env=True,
        headers={"user-agent": USER_AGENT, **(headers or {})},
    )
