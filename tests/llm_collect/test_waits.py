"""Waits as the provider says: Retry-After (bounded, "inf" included), Gemini's retryDelay in the body, the
rate-limit reset headers, x-should-retry; and a wait one worker is told slows every worker on that provider,
through Redis, so that the others give their turn back uncalled instead of spending attempts in the window."""

from datetime import UTC, datetime

import pytest

from llm_collect import limits, services
from llm_collect.calls.config import bounded_wait, retry_delay
from llm_collect.models import Generation
from llm_collect.waits import duration_seconds, provider_wait
from tests.fakes.llm_servers import FakeLLMServer

from .conftest import make_llm_study

NOON = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "body", "wait"),
    [
        ({"retry-after-ms": "250", "retry-after": "3"}, "", 0.25),
        ({"retry-after": "7"}, "", 7.0),
        ({"retry-after": "inf"}, "", float("inf")),  # bounded by the caller
        ({}, '{"error": {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}]}}', 1.5),
        ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s",
          "x-ratelimit-remaining-tokens": "10", "x-ratelimit-reset-tokens": "20ms"}, "", 360.0),
        ({"x-ratelimit-reset-requests": "2s", "x-ratelimit-reset-tokens": "20ms"}, "", 0.02),
        ({"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": "2026-12-01T12:00:45Z"}, "", 45.0),
        ({}, "<html>busy</html>", None),
    ],
)  # fmt: skip
def test_the_wait_is_read_wherever_the_provider_said_it(headers, body, wait):
    assert provider_wait(headers, body, now=NOON) == wait


@pytest.mark.parametrize(("text", "seconds"), [("37s", 37), ("1.5s", 1.5), ("20ms", 0.02), ("1h2m3s", 3723)])
def test_durations_read_as_the_providers_write_them(text, seconds):
    assert duration_seconds(text) == pytest.approx(seconds)
    assert duration_seconds("soon") is None


def test_any_wait_is_bounded_and_inf_is_the_bound_not_an_overflow(settings):
    settings.LLM_CALLS = {**settings.LLM_CALLS, "max_provider_wait_seconds": 120}
    assert bounded_wait(float("inf")) == 120
    assert bounded_wait(float("nan")) == 120
    assert bounded_wait(30) == 30
    assert 120 <= retry_delay(retries=0, retry_after=float("inf"), backoff=False) <= 120.5


def rows(url, provider, n=2, slug="waits"):
    study = make_llm_study(url=url, providers=[provider], vignettes=n, slug=slug)
    run = services.start_collection(study=study, samples=1)
    return list(Generation.objects.filter(run=run).order_by("pk"))


@pytest.mark.django_db
def test_retry_after_inf_puts_the_row_back_for_the_bound_not_a_traceback(settings):
    settings.LLM_CALLS = {**settings.LLM_CALLS, "max_provider_wait_seconds": 90}
    with FakeLLMServer(script=[{"status": 503, "headers": {"retry-after": "inf"}}]) as server:
        gen, _ = rows(server.url, "openai")
        with pytest.raises(services.TryAgain) as caught:
            services.collect(generation_id=gen.pk)
    assert 90 <= caught.value.delay <= 90.5
    gen.refresh_from_db()
    assert gen.status == "pending"


@pytest.mark.django_db
def test_x_should_retry_false_fails_the_row_at_once_and_true_retries_a_4xx():
    with FakeLLMServer(script=[{"status": 429, "headers": {"x-should-retry": "false"}}]) as server:
        gen, _ = rows(server.url, "openai")
        assert services.collect(generation_id=gen.pk) == "failed"
        assert services.collect(generation_id=gen.pk) == "skipped"
        assert len(server.requests) == 1
    gen.refresh_from_db()
    assert "x-should-retry: false" in gen.error
    with FakeLLMServer(script=[{"status": 400, "headers": {"x-should-retry": "true"}}]) as server:
        gen, _ = rows(server.url, "openai", slug="again")
        with pytest.raises(services.TryAgain):
            services.collect(generation_id=gen.pk)
        assert services.collect(generation_id=gen.pk) == "done"


def slowed_down_siblings(url):
    """Gemini answers the first call with a 429 whose wait is only in its body; the second row then comes."""
    first, second = rows(url, "gemini")
    with pytest.raises(services.TryAgain) as caught:
        services.collect(generation_id=first.pk)
    assert caught.value.delay >= 20
    with pytest.raises(services.TryAgain, match="next request slot"):
        services.collect(generation_id=second.pk)
    return first, second


@pytest.mark.django_db
def test_geminis_retry_delay_slows_every_worker_and_costs_the_others_no_attempt():
    with FakeLLMServer(script=[{"status": 429, "retry_delay": "20s"}]) as server:
        _, second = slowed_down_siblings(server.url)
        assert len(server.requests) == 1  # the second row was never sent into the same window
    second.refresh_from_db()
    assert second.attempts == 0  # given back uncalled
    assert second.history[-1]["outcome"].startswith("not called")


@pytest.mark.redis
@pytest.mark.django_db
def test_the_slow_down_is_shared_through_redis(settings):
    with FakeLLMServer(script=[{"status": 429, "retry_delay": "20s"}]) as server:
        first, second = rows(server.url, "gemini")
        with pytest.raises(services.TryAgain):
            services.collect(generation_id=first.pk)
        limits._local = limits.LocalBackend()  # nothing left in this process: only Redis remembers
        limits.redis_client.cache_clear()  # a fresh connection, as another worker has
        with pytest.raises(services.TryAgain, match="next request slot"):
            services.collect(generation_id=second.pk)
        assert len(server.requests) == 1
