"""Fixtures for LLM collection: a fake provider on 127.0.0.1 and a draft study with LLM systems pointed at it."""

import pytest

from llm_collect import limits
from surveys.models import Question, Study, System, Vignette
from tests.conftest import QUESTION_KEYS
from tests.fakes.llm_servers import FakeLLMServer

FAST = {"requests_per_minute": 60000, "burst": 100, "concurrency": 50}


@pytest.fixture
def fake():
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(autouse=True)
def fresh_local_limiter(monkeypatch):
    """The in-process limiter keeps slots and penalties per key: each test starts with none."""
    monkeypatch.setattr(limits, "_local", limits.LocalBackend())


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("FAKE_LLM_API_KEY", "sk-test")


def make_llm_study(*, url: str, slug="llm", providers=("openai-compatible",), vignettes=2, parameters=None):
    study = Study.objects.create(slug=slug, name=f"Study {slug}")
    for position, key in enumerate(QUESTION_KEYS):
        Question.objects.create(study=study, key=key, text=f"Which is better on {key}?", position=position)
    for n in range(1, vignettes + 1):
        Vignette.objects.create(study=study, key=f"v{n}", character=f"Sam{n}", text=f"Story {n}.", position=n)
    for position, provider in enumerate(providers):
        System.objects.create(
            study=study,
            key=f"m{position}",
            label=f"Model {position}",
            kind="llm",
            provider=provider,
            model={"openai": "gpt-4o", "anthropic": "claude-3-7-sonnet-20250219", "gemini": "gemini-1.5-flash"}.get(
                provider, "deepseek-chat"
            ),
            base_url=url,
            api_key_env="FAKE_LLM_API_KEY",
            parameters={**FAST, **(parameters or {})},
            position=position,
        )
    System.objects.create(study=study, key="humans", label="Lay humans", kind="human", position=99)
    return study


def queued(callbacks) -> list[int]:
    """The row ids the captured on-commit callbacks send, in order (calls.queueing.send(task, model, ids))."""
    return [pk for callback in callbacks for pk in callback.args[2]]
