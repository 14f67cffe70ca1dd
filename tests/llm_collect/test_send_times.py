"""The limiter's second bucket, on the times requests are actually sent (what a provider counts)."""

import uuid

import pytest

from llm_collect import limits

from .test_limits import BACKENDS, make


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_request_sent_now_holds_the_next_back_one_interval(kind):
    backend, key = make(kind), uuid.uuid4().hex
    assert backend.clear_to_send(key, 10.0, 0.0) == 0
    assert backend.clear_to_send(key, 10.0, 0.0) == pytest.approx(10, abs=0.1)
    assert backend.clear_to_send(key, 10.0, 10.0) == 0  # a provider burst of two lets it through


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_429_holds_back_requests_already_booked_as_well(kind):
    backend, key = make(kind), uuid.uuid4().hex
    assert backend.reserve(key, 1.0, 0.0, 10.0) == (True, pytest.approx(0, abs=0.05))  # booked, then the 429
    backend.penalise(key, 30)
    assert backend.clear_to_send(key, 1.0, 0.0) == pytest.approx(30, abs=0.1)


def test_a_booked_slot_whose_provider_window_is_beyond_the_wait_gives_up_busy(monkeypatch):
    backend = limits.LocalBackend()
    monkeypatch.setattr(limits, "backend", lambda: backend)
    limit = limits.Limit(key="p|http://x", requests_per_minute=6, burst=1, concurrency=1)
    backend.clear_to_send(limit.key, 10.0, 0.0)  # a request another worker sent late, just now
    with pytest.raises(limits.Busy, match="window opens in") as caught:
        limits.wait_for_rate(limit, max_wait=1)
    assert caught.value.retry_after == pytest.approx(10, abs=0.1)
