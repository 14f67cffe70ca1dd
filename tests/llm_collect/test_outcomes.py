"""Outcomes that say what happened: a refusal, a length cut or a safety block is stored with the provider's own
reason, shown in the admin and the run's summary, and not paid for again unless the researcher asks; a length
cut is asked once more with a larger budget when the System allows it."""

import pytest
from django.urls import reverse

from llm_collect import services
from llm_collect.models import CollectionRun, Generation
from tests.fakes.llm_servers import FakeLLMServer

from .conftest import make_llm_study

pytestmark = pytest.mark.django_db


def one_generation(url, provider, parameters=None):
    study = make_llm_study(url=url, providers=[provider], vignettes=1, parameters=parameters)
    run = services.start_collection(study=study, samples=1)
    return run, Generation.objects.get(run=run)


@pytest.mark.parametrize(
    ("provider", "step", "outcome", "reason"),
    [
        ("openai", {"outcome": "refused", "reason": "I can't help with that request."}, "refused",
         "I can't help with that request."),
        ("anthropic", {"outcome": "refused", "reason": "I won't write that."}, "refused", "stop_reason: refusal"),
        ("openai", {"outcome": "blocked"}, "blocked", "finish_reason: content_filter"),
        ("gemini", {"outcome": "blocked"}, "blocked", "finishReason: SAFETY; rated: HARM_CATEGORY_HARASSMENT MEDIUM"),
        ("gemini", {"outcome": "blocked", "reason": "prompt"}, "blocked", "promptFeedback.blockReason: SAFETY"),
        ("openai", {"outcome": "length"}, "length", "finish_reason: length"),
        ("anthropic", {"outcome": "length"}, "length", "stop_reason: max_tokens"),
        ("gemini", {"outcome": "length"}, "length", "finishReason: MAX_TOKENS"),
    ],
)  # fmt: skip
def test_a_reply_the_provider_marked_is_stored_with_its_reason_and_not_asked_again(
    provider, step, outcome, reason, admin_client
):
    with FakeLLMServer(script=[step]) as server:
        _, gen = one_generation(server.url, provider)
        assert services.collect(generation_id=gen.pk) == "invalid"
        assert services.collect(generation_id=gen.pk) == "skipped"  # final: no second call, no second cost
        assert len(server.requests) == 1
    gen.refresh_from_db()
    assert (gen.status, gen.outcome) == ("invalid", outcome)
    assert reason in gen.outcome_reason
    assert gen.input_tokens == 400  # the paid call is counted
    label = Generation.Outcome(outcome).label
    assert [e["outcome"] for e in gen.history] == [label]
    summary = admin_client.get(reverse("admin:llm_collect_collectionrun_changelist")).content.decode()
    assert f"1 invalid · 0 failed · 0 running · 0 pending (1 {label.lower()})" in summary
    page = admin_client.get(reverse("admin:llm_collect_generation_change", args=[gen.pk])).content.decode()
    assert label in page
    assert CollectionRun.objects.get().counts()[outcome] == 1


def test_a_refusal_is_asked_again_only_when_the_researcher_asks():
    with FakeLLMServer(script=[{"outcome": "refused"}]) as server:
        _, gen = one_generation(server.url, "openai")
        services.collect(generation_id=gen.pk)
        assert services.start_collection(study=gen.system.study, samples=1).planned == 0
        assert services.retry_generations(generation_ids=[gen.pk]) == 1  # the researcher asks
        assert services.collect(generation_id=gen.pk) == "done"
    gen.refresh_from_db()
    assert (gen.status, gen.outcome, gen.outcome_reason) == ("done", "", "")
    assert [e["outcome"] for e in gen.history] == ["Refused by the model", "asked again", "answer stored"]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_a_length_cut_is_asked_once_more_with_the_larger_budget_the_system_allows(provider):
    parameters = {"max_tokens": 1000, "length_retry_max_tokens": 8000}
    with FakeLLMServer(script=[{"outcome": "length"}, {"outcome": "length"}]) as server:
        _, gen = one_generation(server.url, provider, parameters)
        with pytest.raises(services.TryAgain, match="cut by length"):
            services.collect(generation_id=gen.pk)
        assert services.collect(generation_id=gen.pk) == "invalid"  # cut again: once only
        first, second = (body for _, _, body in server.requests)
    budget = {"openai": "max_tokens", "anthropic": "max_tokens", "gemini": "maxOutputTokens"}[provider]
    read = (lambda body: body["generationConfig"][budget]) if provider == "gemini" else (lambda body: body[budget])
    assert (read(first), read(second)) == (1000, 8000)
    gen.refresh_from_db()
    assert gen.outcome == "length"
    assert gen.attempts == 2


def test_a_length_cut_without_a_larger_budget_is_not_asked_again():
    with FakeLLMServer(script=[{"outcome": "length"}]) as server:
        _, gen = one_generation(server.url, "openai")
        assert services.collect(generation_id=gen.pk) == "invalid"
        assert len(server.requests) == 1


def test_a_reply_that_cannot_be_read_is_malformed_after_its_tries():
    with FakeLLMServer(default={"text": "not JSON"}) as server:
        _, gen = one_generation(server.url, "openai")
        for _ in range(services.call_settings()["max_invalid_attempts"] - 1):
            with pytest.raises(services.TryAgain):
                services.collect(generation_id=gen.pk)
        assert services.collect(generation_id=gen.pk) == "invalid"
    gen.refresh_from_db()
    assert gen.outcome == "malformed"
    assert "no JSON object" in gen.outcome_reason
