"""Fixtures for LLM judging: a live study with human judgments and judge models pointed at a fake provider."""

import pytest

from llm_collect import limits
from llm_judging.models import JudgeModel
from tests.conftest import make_judged_study
from tests.fakes.llm_servers import FakeLLMServer
from tests.llm_collect.conftest import queued  # noqa: F401  (the same helper)

FAST = {"requests_per_minute": 60000, "burst": 100, "concurrency": 50}
MODELS = {
    "openai": "gpt-4o",
    "anthropic": "claude-3-7-sonnet-20250219",
    "gemini": "gemini-1.5-flash",
    "openai-compatible": "deepseek-chat",
}


@pytest.fixture(autouse=True)
def fresh_local_limiter(monkeypatch):
    monkeypatch.setattr(limits, "_local", limits.LocalBackend())


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("FAKE_LLM_API_KEY", "sk-test")


@pytest.fixture
def fake():
    with FakeLLMServer() as server:
        yield server


def make_judge(url: str, provider: str = "openai", *, study, key: str | None = None, parameters=None) -> JudgeModel:
    return JudgeModel.objects.create(
        study=study,
        key=key or MODELS[provider].split("-2025")[0],
        provider=provider,
        model=MODELS[provider],
        base_url=url,
        api_key_env="FAKE_LLM_API_KEY",
        parameters={**FAST, **(parameters or {})},
    )


@pytest.fixture
def judged_study(db):
    """Live, three systems × three vignettes (9 cells), 60 human judges."""
    return make_judged_study(slug="judged", participants=60)
