"""Per-provider rate and concurrency limits: in-process, and shared through Redis."""

import uuid

import pytest

from llm_collect import limits

BACKENDS = [pytest.param("local", id="in-process"), pytest.param("redis", id="redis", marks=pytest.mark.redis)]


def make(kind):
    from django.conf import settings

    return limits.RedisBackend(settings.REDIS_URL) if kind == "redis" else limits.LocalBackend()


@pytest.mark.parametrize("kind", BACKENDS)
def test_requests_are_booked_one_interval_apart_and_refused_beyond_the_wait(kind):
    backend, key = make(kind), uuid.uuid4().hex
    waits = [backend.reserve(key, 1.0, 0.0, 10.0) for _ in range(3)]
    assert [ok for ok, _ in waits] == [True, True, True]
    assert waits[0][1] == pytest.approx(0, abs=0.05)
    assert waits[1][1] == pytest.approx(1, abs=0.05)
    assert waits[2][1] == pytest.approx(2, abs=0.05)
    ok, wait = backend.reserve(key, 1.0, 0.0, 2.5)
    assert not ok
    assert wait == pytest.approx(3, abs=0.05)


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_burst_lets_that_many_through_at_once(kind):
    backend, key = make(kind), uuid.uuid4().hex
    waits = [backend.reserve(key, 1.0, 2.0, 10.0)[1] for _ in range(4)]
    assert waits[:3] == pytest.approx([0, 0, 0], abs=0.05)
    assert waits[3] == pytest.approx(1, abs=0.05)


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_429_pushes_the_next_slot_past_retry_after(kind):
    backend, key = make(kind), uuid.uuid4().hex
    backend.penalise(key, 30)
    ok, wait = backend.reserve(key, 1.0, 0.0, 10.0)
    assert not ok
    assert wait == pytest.approx(30, abs=0.1)


@pytest.mark.parametrize("kind", BACKENDS)
def test_the_concurrency_semaphore_holds_its_limit_and_frees_on_release_or_expiry(kind):
    backend, key = make(kind), uuid.uuid4().hex
    assert backend.acquire(key, 2, 60, "a")
    assert backend.acquire(key, 2, 60, "b")
    assert not backend.acquire(key, 2, 60, "c")
    backend.release(key, "a")
    assert backend.acquire(key, 2, 60, "c")
    expiring = uuid.uuid4().hex
    assert backend.acquire(expiring, 1, 0.0, "dead-worker")
    assert backend.acquire(expiring, 1, 60, "next")  # the dead worker's place came back by itself


def test_limits_come_from_settings_and_a_system_may_override_them(settings):
    settings.LLM_RATE_LIMITS = {"default": {"concurrency": 3}, "gemini": {"requests_per_minute": 15}}
    limit = limits.limit_for(provider="gemini", base_url="https://x/", parameters={"burst": 4})
    assert (limit.requests_per_minute, limit.burst, limit.concurrency) == (15, 4, 3)
    assert limit.key == "gemini|https://x"
