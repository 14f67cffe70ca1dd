"""moraljudge/http.py: the one classification of HTTP failures and the one Retry-After reader, as both the LLM
client and the Prolific client see them."""

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from moraljudge import http


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        (408, True),
        (409, True),
        (425, True),
        (429, True),
        (500, True),
        (502, True),
        (503, True),
        (529, True),
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (410, False),
        (422, False),
    ],
)
def test_each_failure_status_has_one_class(status, retryable):
    assert http.is_failure(status)
    assert http.is_retryable_status(status) is retryable


def test_retry_after_may_be_an_http_date():
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    in_90_seconds = format_datetime(now + timedelta(seconds=90), usegmt=True)
    assert http.retry_after_seconds({"retry-after": in_90_seconds}, now=now) == 90.0
    # A date already past means "now", never a negative wait.
    assert http.retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=now) == 0.0


def test_retry_after_in_seconds_or_milliseconds():
    assert http.retry_after_seconds(httpx.Headers({"retry-after": "7"})) == 7.0
    assert http.retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5  # the finer one wins
    assert http.retry_after_seconds({"retry-after": "soon"}) is None
    assert http.retry_after_seconds({}) is None


def test_both_clients_read_the_same_failure_the_same_way(settings, monkeypatch):
    from llm_collect import client as llm
    from surveys.prolific import client as prolific

    monkeypatch.setenv("FAKE_LLM_API_KEY", "sk-test")
    settings.LLM_ALLOWED_HOSTS = ["llm.test"]
    settings.PROLIFIC_API_TOKEN = "t"
    settings.PROLIFIC_API_URL = "https://prolific.test/api/v1/"

    def busy(request):
        return httpx.Response(409, headers={"retry-after-ms": "250"}, json={"error": {"detail": "busy"}})

    target = llm.Target(provider="openai", model="gpt-4o", base_url="https://llm.test", api_key_env="FAKE_LLM_API_KEY")
    with llm.build_client(transport=httpx.MockTransport(busy)) as c, pytest.raises(llm.Retryable) as from_llm:
        llm.complete(target, system_prompt="S", user_prompt="U", http_client=c)
    with (
        prolific.make_client(transport=httpx.MockTransport(busy)) as c,
        pytest.raises(prolific.Retryable) as from_prolific,
    ):
        prolific._send_once(c, "GET", "studies/x/submissions/", None)
    assert from_llm.value.retry_after == from_prolific.value.retry_after == 0.25


def test_clients_follow_no_redirects_and_take_proxies_from_the_environment():
    with http.build_client(timeout=5) as c:
        assert c.follow_redirects is False
        assert c.timeout.read == 5
        assert c.timeout.connect == 5
        assert c._trust_env is True
