"""Calling a provider: one POST over the shared HTTP layer (moraljudge/http.py), shaped by the provider's wire
format (llm_collect/providers/). It touches no ORM.

Provider defaults apply (temperature, top_p …) unless the System's parameters set them. Parameters are sent as
they are, except the few this project reads itself (providers.base.OWN_PARAMETERS).

Why our own httpx code and not the official SDKs (openai, anthropic, google-genai): a paid call must be made
at most once per claim, and the SDKs retry by themselves (two retries by default, each one paid); our retries
go through the Generation's claim and attempt counter instead. One HTTP layer also serves Prolific, so both
read Retry-After and classify failures the same way.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass, field

import httpcore
import httpx

from moraljudge import http

from . import keys, waits
from .providers import OutputSchema, Prompt, wire_format

DEFAULT_TIMEOUT = 120.0  # seconds for a whole reply; connecting gets less


class ClientError(Exception):
    """A call that produced no usable reply."""

    def __init__(self, message: str, *, status: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class Retryable(ClientError):
    """Timeouts, connection errors, and the statuses moraljudge.http calls retryable (after retry_after if set)."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class Permanent(ClientError):
    """Other 4xx, a missing key, an unknown provider: another identical call cannot help."""


class MissingKey(Permanent):
    """The environment variable holding a provider key is not set."""


class KeyRefused(MissingKey):
    """The variable is not one the deployment allows as an LLM key, or the key's host is not allowed."""


class DestinationRefused(KeyRefused):
    """The call's host, or an address it resolves to, is not one the deployment allows (llm_collect/keys.py)."""


@dataclass(frozen=True)
class Target:
    """What to call: a System's provider settings as plain values."""

    provider: str
    model: str
    base_url: str = ""
    api_key_env: str = ""
    parameters: dict = field(default_factory=dict)
    label: str = ""
    max_output_tokens: int | None = None  # a larger budget than the System's own (the retry after a length cut)

    @property
    def endpoint_base(self) -> str:
        return (self.base_url or wire(self.provider).default_base_url).rstrip("/")

    @property
    def timeout(self) -> float:
        return float(self.parameters.get("timeout") or DEFAULT_TIMEOUT)


@dataclass(frozen=True)
class Reply:
    text: str
    raw: dict
    request: dict
    input_tokens: int = 0
    output_tokens: int = 0
    model_version: str = ""
    finish_reason: str = ""
    latency: float = 0.0  # seconds
    outcome: str = ""  # refused, length, blocked (providers.base.ReplyContent)
    outcome_reason: str = ""
    notes: tuple[str, ...] = ()  # what was changed from the System's parameters to fit the model


def wire(provider: str):
    try:
        return wire_format(provider)
    except KeyError:
        raise Permanent(f"Unknown provider '{provider}'.") from None


def key_variable(target: Target) -> str | None:
    """The environment variable holding the key, or None for a keyless self-hosted endpoint."""
    if target.api_key_env:
        return target.api_key_env
    fmt = wire(target.provider)
    if fmt.keyless_with_own_base_url and target.base_url:
        return None  # vLLM, Ollama and the like on the researcher's own machine need no key
    return fmt.default_key_variable


def check_key_allowed(target: Target, *, resolve: bool = False) -> str | None:
    """The variable the key is read from, if the deployment allows it and the host it would go to; KeyRefused
    otherwise (llm_collect/keys.py). None for a keyless call, which must go to an allowed host too. The key itself
    is not read. `resolve` also checks the addresses the host resolves to now (forms, a run's start)."""
    try:
        keys.check_destination(target.endpoint_base, resolve=resolve)
    except keys.NotAllowed as exc:
        raise DestinationRefused(f"{exc} (system '{target.label or target.model}')") from None
    name = key_variable(target)
    if name is None:
        return None
    try:
        keys.check_key_variable(name, who=f"system '{target.label or target.model}'")
        keys.check_key_host(target.endpoint_base, variable=name)
    except keys.NotAllowed as exc:
        raise KeyRefused(str(exc)) from None
    return name


def api_key(target: Target) -> str:
    """The key to send, read only from an allowed variable and only for an allowed host."""
    name = check_key_allowed(target)
    if name is None:
        return ""
    value = os.environ.get(name, "")
    if not value:
        raise MissingKey(
            f"The environment variable {name} is not set: it must hold the {target.provider} API key "
            f"for system '{target.label or target.model}'."
        )
    return value


class CheckedAddresses(httpcore.SyncBackend):
    """Connects only to addresses keys.address_allowed allows, resolved here and connected to by address, so a name
    that resolves to an allowed address when checked cannot lead elsewhere when connecting (TLS still checks the
    name: httpcore gives the host as server_hostname)."""

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise httpcore.ConnectError(f"{host} does not resolve: {exc}") from exc
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        allowed = [address for address in addresses if keys.address_allowed(address, host)]
        if not allowed:
            raise keys.NotAllowed(
                f"No call goes to {host}: it resolves to {', '.join(addresses)}, a loopback, private or link-local "
                "address the deployment's setting LLM_ALLOWED_HOSTS does not list."
            )
        return super().connect_tcp(allowed[0], port, timeout, local_address, socket_options)


def build_client(*, timeout: float = DEFAULT_TIMEOUT, transport: httpx.BaseTransport | None = None) -> httpx.Client:
    """The LLM providers' client: its direct connections go only to allowed addresses (CheckedAddresses)."""
    if transport is None:
        checked = httpx.HTTPTransport()
        # httpx 0.28 does not take a network backend; its pool (httpcore 1.0) keeps the one it connects with here.
        checked._pool._network_backend = CheckedAddresses()
        transport = checked
    return http.build_client(timeout=timeout, transport=transport)


def complete(
    target: Target,
    *,
    system_prompt: str,
    user_prompt: str,
    schema: OutputSchema | None = None,
    http_client: httpx.Client | None = None,
) -> Reply:
    """One call. Raises Retryable or Permanent; returns the Reply otherwise (its text may still be unusable).

    ``schema``: the reply's JSON shape, sent as the provider's structured-output setting (None: an answer).
    """
    fmt = wire(target.provider)
    key = api_key(target)
    request = fmt.request(target, Prompt(system=system_prompt, user=user_prompt, schema=schema))
    raw, latency = post(request.url, {**request.headers, **fmt.auth_headers(key)}, request.body, target, http_client)
    try:
        content = fmt.read(raw)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise Retryable(f"Unexpected response shape: {exc!r}", body=json.dumps(raw)[:2000]) from exc
    return Reply(raw=raw, request=request.body, latency=latency, notes=request.notes, **content.__dict__)


def post(url: str, headers: dict, body: dict, target: Target, client: httpx.Client | None) -> tuple[dict, float]:
    """The HTTP exchange: the reply's JSON object and the seconds it took, or Retryable / Permanent."""
    own_client = client is None
    client = client or build_client(timeout=target.timeout)
    started = time.monotonic()
    try:
        response = client.post(url, headers=headers, json=body)
    except keys.NotAllowed as exc:  # from CheckedAddresses: never tried again
        raise DestinationRefused(str(exc)) from None
    except httpx.TimeoutException as exc:
        raise Retryable(f"Timed out after {time.monotonic() - started:.1f} s: {exc!r}") from exc
    except httpx.TransportError as exc:
        raise Retryable(f"Connection error: {exc!r}") from exc
    finally:
        if own_client:
            client.close()
    latency = time.monotonic() - started
    check_status(response)
    try:
        raw = response.json()
    except ValueError as exc:
        raise Retryable(
            f"The provider sent a body that is not JSON (HTTP {response.status_code}).",
            status=response.status_code,
            body=response.text[:2000],
        ) from exc
    if not isinstance(raw, dict):
        raise Retryable("The provider sent JSON that is not an object.", body=response.text[:2000])
    return raw, latency


def check_status(response: httpx.Response) -> None:
    """Retryable or Permanent for a failure, as moraljudge.http classifies it unless the provider says
    otherwise (``x-should-retry``, as the official SDKs obey it); the wait is the provider's (waits.py)."""
    status = response.status_code
    if not http.is_failure(status):
        return
    message = f"HTTP {status} from {response.request.url.host}: {provider_error(response.text)}"
    said = response.headers.get("x-should-retry", "").strip().lower()
    retryable = said == "true" or (said != "false" and http.is_retryable_status(status))
    if retryable:
        wait = waits.provider_wait(response.headers, response.text)
        raise Retryable(message, retry_after=wait, status=status, body=response.text)
    if said == "false":
        message += " (the provider said not to retry: x-should-retry: false)"
    raise Permanent(message, status=status, body=response.text)


def provider_error(text: str) -> str:
    """What a failed call's body says, as researchers see it: the provider's error message (OpenAI's, Anthropic's
    and Gemini's {"error": {"message": ...}}, or a plain {"error"|"message": "..."}), never the raw body, which
    could be anything the server at that address answers."""
    try:
        body = json.loads(text)
    except ValueError:
        return f"(a body that is not a provider's JSON error, {len(text)} characters, not shown)"
    said = body.get("error", body.get("message")) if isinstance(body, dict) else None
    if isinstance(said, dict):
        said = said.get("message") or said.get("type") or said.get("status")
    if not isinstance(said, str) or not said.strip():
        return "(no error message in the provider's answer)"
    return said.strip()[:300]


def read_reply(provider: str, raw: dict) -> Reply:
    """A stored raw reply read again (e.g. after a reader was fixed): no call, no cost."""
    content = wire(provider).read(raw)
    return Reply(raw=raw, request={}, **content.__dict__)
