"""Per-provider request rate and concurrency limits, held across every worker through Redis.

- Rate: GCRA (a token bucket kept as one "theoretical arrival time" per key). ``reserve`` books the next free
  slot if it is no more than ``max_wait`` seconds away and says how long to wait for it; the caller sleeps
  that long, then calls. Requests are therefore spaced ``60 / requests_per_minute`` seconds apart, with
  ``burst`` of them allowed back to back. A 429 from the provider pushes the key's next slot past its
  Retry-After (``penalise``), so every worker backs off, not only the one that was refused.
- Sending: a booked slot says when a request may leave, but a thread can wake late from its sleep (a loaded
  machine), and a provider counts arrivals. One request late by more than the provider's tolerance put the
  provider's own bucket behind ours, so it refused the next one sent on time, and the 429 stalled every worker
  for a whole Retry-After second. So just before sending, a second GCRA on the actual send times
  (``clear_to_send``), the provider's own model, holds a request back by the few milliseconds it needs.
- Concurrency: a semaphore kept as a sorted set of holders with expiry times, renewed while the call runs, so a
  killed worker's place comes back by itself after ``ttl`` seconds.

Both run as Lua scripts on the Redis server, using its clock. Without REDIS_URL the same algorithms run
in-process under a lock (one process only: the laptop quickstart and tests).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass
from functools import lru_cache

from django.conf import settings

logger = logging.getLogger(__name__)

KEY_PREFIX = "mj:llm:"

RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local max_wait = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - tolerance - now
if wait < 0 then wait = 0 end
if wait > max_wait then return {0, tostring(wait)} end
local new_tat = tat + interval
redis.call('SET', KEYS[1], tostring(new_tat), 'PX', math.ceil((new_tat - now + 60) * 1000))
return {1, tostring(wait)}
"""

SEND = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local wait = tat - tolerance - now
if wait > 0 then return tostring(wait) end
local new_tat = tat + interval
redis.call('SET', KEYS[1], tostring(new_tat), 'PX', math.ceil((new_tat - now + 60) * 1000))
return '0'
"""

PENALISE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local until_ = now + tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if until_ > tat then
  redis.call('SET', KEYS[1], tostring(until_), 'PX', math.ceil((until_ - now + 60) * 1000))
end
return 1
"""

ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[2]) * 1000) + 60000)
  return 1
end
return 0
"""

REFRESH = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(ARGV[1]) * 1000) + 60000)
end
return 1
"""


@dataclass(frozen=True)
class Limit:
    key: str
    requests_per_minute: float
    burst: int
    concurrency: int


class Busy(Exception):
    """No slot within the time a worker may wait: try again after ``retry_after`` seconds."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def limit_for(*, provider: str, base_url: str, parameters: dict) -> Limit:
    """The provider's limits from settings.LLM_RATE_LIMITS, overridden by the System's parameters."""
    table = getattr(settings, "LLM_RATE_LIMITS", {})
    configured = {**table.get("default", {}), **table.get(provider, {})}
    own = {k: parameters[k] for k in ("requests_per_minute", "burst", "concurrency") if k in parameters}
    merged = {"requests_per_minute": 60, "burst": 1, "concurrency": 4, **configured, **own}
    return Limit(
        key=f"{provider}|{base_url.rstrip('/')}",
        requests_per_minute=float(merged["requests_per_minute"]),
        burst=max(1, int(merged["burst"])),
        concurrency=max(1, int(merged["concurrency"])),
    )


@lru_cache(maxsize=4)
def redis_client(url: str):
    import redis

    return redis.Redis.from_url(url)


class RedisBackend:
    def __init__(self, url: str) -> None:
        self.redis = redis_client(url)

    def reserve(self, key: str, interval: float, tolerance: float, max_wait: float) -> tuple[bool, float]:
        ok, wait = self.redis.eval(RESERVE, 1, KEY_PREFIX + "rate:" + key, interval, tolerance, max_wait)
        return bool(int(ok)), float(wait)

    def clear_to_send(self, key: str, interval: float, tolerance: float) -> float:
        return float(self.redis.eval(SEND, 1, KEY_PREFIX + "sent:" + key, interval, tolerance))

    def penalise(self, key: str, seconds: float) -> None:
        for kind in ("rate:", "sent:"):
            self.redis.eval(PENALISE, 1, KEY_PREFIX + kind + key, seconds)

    def acquire(self, key: str, limit: int, ttl: float, token: str) -> bool:
        return bool(int(self.redis.eval(ACQUIRE, 1, KEY_PREFIX + "conc:" + key, limit, ttl, token)))

    def refresh(self, key: str, ttl: float, token: str) -> None:
        self.redis.eval(REFRESH, 1, KEY_PREFIX + "conc:" + key, ttl, token)

    def release(self, key: str, token: str) -> None:
        self.redis.zrem(KEY_PREFIX + "conc:" + key, token)


class LocalBackend:
    """The same algorithms in one process, for when there is no Redis."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tats: dict[str, float] = {}
        self.sent: dict[str, float] = {}
        self.holders: dict[str, dict[str, float]] = {}

    def reserve(self, key: str, interval: float, tolerance: float, max_wait: float) -> tuple[bool, float]:
        with self.lock:
            now = time.monotonic()
            tat = max(self.tats.get(key, 0.0), now)
            wait = max(0.0, tat - tolerance - now)
            if wait > max_wait:
                return False, wait
            self.tats[key] = tat + interval
            return True, wait

    def clear_to_send(self, key: str, interval: float, tolerance: float) -> float:
        with self.lock:
            now = time.monotonic()
            tat = max(self.sent.get(key, 0.0), now)
            wait = tat - tolerance - now
            if wait > 0:
                return wait
            self.sent[key] = tat + interval
            return 0.0

    def penalise(self, key: str, seconds: float) -> None:
        with self.lock:
            until = time.monotonic() + seconds
            self.tats[key] = max(self.tats.get(key, 0.0), until)
            self.sent[key] = max(self.sent.get(key, 0.0), until)

    def acquire(self, key: str, limit: int, ttl: float, token: str) -> bool:
        with self.lock:
            now = time.monotonic()
            holders = {t: exp for t, exp in self.holders.get(key, {}).items() if exp > now}
            self.holders[key] = holders
            if len(holders) >= limit:
                return False
            holders[token] = now + ttl
            return True

    def refresh(self, key: str, ttl: float, token: str) -> None:
        with self.lock:
            holders = self.holders.get(key, {})
            if token in holders:
                holders[token] = time.monotonic() + ttl

    def release(self, key: str, token: str) -> None:
        with self.lock:
            self.holders.get(key, {}).pop(token, None)


_local = LocalBackend()


def backend():
    url = getattr(settings, "REDIS_URL", "")
    return RedisBackend(url) if url else _local


def wait_for_rate(limit: Limit, *, max_wait: float) -> float:
    """Book the next request slot and sleep until it, then until the send times allow it (see the module
    docstring); Busy if either is more than max_wait away. Returns the seconds slept."""
    interval = 60.0 / limit.requests_per_minute
    tolerance = interval * (limit.burst - 1)
    ok, wait = backend().reserve(limit.key, interval, tolerance, max_wait)
    if not ok:
        raise Busy(f"{limit.key}: next request slot in {wait:.1f} s", retry_after=wait)
    slept = 0.0
    while True:
        if wait > 0:
            time.sleep(wait)
            slept += wait
        wait = backend().clear_to_send(limit.key, interval, tolerance)
        if wait <= 0:
            return slept
        if slept + wait > max_wait:
            raise Busy(f"{limit.key}: the provider's window opens in {wait:.1f} s", retry_after=wait)


def penalise(limit: Limit, seconds: float) -> None:
    backend().penalise(limit.key, seconds)


class concurrency_slot:
    """Hold one of the provider's concurrent-request places (polling up to max_wait seconds)."""

    def __init__(self, limit: Limit, *, ttl: float, max_wait: float) -> None:
        self.limit, self.ttl, self.max_wait = limit, ttl, max_wait
        self.token = uuid.uuid4().hex

    def __enter__(self):
        deadline = time.monotonic() + self.max_wait
        pause = 0.02
        while not backend().acquire(self.limit.key, self.limit.concurrency, self.ttl, self.token):
            if time.monotonic() >= deadline:
                raise Busy(f"{self.limit.key}: {self.limit.concurrency} requests already running", retry_after=1.0)
            time.sleep(pause)
            pause = min(pause * 2, 0.25)
        return self

    def refresh(self) -> None:
        """Keep the place while the call runs (a killed worker's place comes back after ttl)."""
        backend().refresh(self.limit.key, self.ttl, self.token)

    def __exit__(self, *exc) -> None:
        try:
            backend().release(self.limit.key, self.token)
        except Exception:
            # Redis out of reach as the call ends: the place lapses after its ttl by itself, and the reply in hand
            # (already paid for) must still be stored.
            logger.warning("could not give back a concurrency place of %s; it lapses by itself", self.limit.key)
