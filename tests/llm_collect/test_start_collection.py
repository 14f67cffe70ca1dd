"""Starting a collection run and the sweep that re-queues what was lost."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from llm_collect import services
from llm_collect.models import Generation
from surveys.services.answer_records import create_answer
from surveys.services.answer_shape import FeatureIn

from .conftest import make_llm_study, queued


@pytest.mark.django_db
def test_it_queues_one_task_per_system_vignette_and_sample_after_commit(fake, django_capture_on_commit_callbacks):
    study = make_llm_study(url=fake.url, providers=["openai", "anthropic"], vignettes=3)
    with django_capture_on_commit_callbacks() as callbacks:
        run = services.start_collection(study=study, samples=2)
    assert run.planned == 12
    assert len(queued(callbacks)) == 12
    assert Generation.objects.filter(run=run, status="pending").count() == 12
    assert set(run.systems.values_list("key", flat=True)) == {"m0", "m1"}  # not the human system
    first = queued(callbacks)[:2]
    gens = Generation.objects.in_bulk(first)
    assert {g.sample for g in gens.values()} == {1}
    assert len({g.system_id for g in gens.values()}) == 2


@pytest.mark.django_db
def test_starting_again_reuses_rows_and_does_not_ask_finished_samples_again(fake, django_capture_on_commit_callbacks):
    study = make_llm_study(url=fake.url, vignettes=1)
    run = services.start_collection(study=study, samples=2)
    done = Generation.objects.filter(run=run, sample=1).get()
    services.collect(generation_id=done.pk)
    with django_capture_on_commit_callbacks() as callbacks:
        again = services.start_collection(study=study, samples=2)
    assert Generation.objects.count() == 2
    assert again.planned == 1
    assert again.already_present == 1
    assert len(queued(callbacks)) == 1


@pytest.mark.django_db
def test_a_sample_that_already_has_an_answer_is_not_asked_for(fake):
    study = make_llm_study(url=fake.url, vignettes=1)
    system, vignette = study.systems.get(key="m0"), study.vignettes.get()
    create_answer(system=system, vignette=vignette, features=[FeatureIn(feature="x", weight=100)], action="a", sample=1)
    run = services.start_collection(study=study, samples=2)
    assert run.planned == 1
    assert run.already_present == 1
    assert Generation.objects.get(sample=1).status == "done"


@pytest.mark.django_db
def test_a_missing_key_stops_the_start_with_the_variable_named(fake, monkeypatch):
    study = make_llm_study(url=fake.url, vignettes=1)
    monkeypatch.delenv("FAKE_LLM_API_KEY")
    with pytest.raises(ValidationError, match="FAKE_LLM_API_KEY"):
        services.start_collection(study=study)
    assert not Generation.objects.exists()


@pytest.mark.django_db
def test_unknown_system_keys_are_refused(fake):
    study = make_llm_study(url=fake.url, vignettes=1)
    with pytest.raises(ValidationError, match="nope"):
        services.start_collection(study=study, system_keys=["nope"])
    with pytest.raises(ValidationError, match="at least one"):
        services.start_collection(study=study, samples=0)


@pytest.mark.django_db
def test_failed_rows_are_asked_again_only_when_requested(fake, django_capture_on_commit_callbacks):
    study = make_llm_study(url=fake.url, vignettes=1)
    services.start_collection(study=study, samples=1)
    Generation.objects.update(status="invalid", attempts=3)
    with django_capture_on_commit_callbacks() as callbacks:
        assert services.start_collection(study=study, samples=1).planned == 0
        run = services.start_collection(study=study, samples=1, retry_failed=True)
    assert run.planned == 1
    assert len(queued(callbacks)) == 1
    assert Generation.objects.get().attempts == 0


@pytest.mark.django_db
def test_the_sweep_requeues_stale_pending_and_expired_running_rows_once(fake, django_capture_on_commit_callbacks):
    study = make_llm_study(url=fake.url, vignettes=3)
    services.start_collection(study=study, samples=1)
    stale, expired, _fresh = Generation.objects.order_by("pk")
    Generation.objects.filter(pk=stale.pk).update(queued_at=timezone.now() - timedelta(hours=1))
    Generation.objects.filter(pk=expired.pk).update(
        status="running", attempts=1, lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    with django_capture_on_commit_callbacks() as callbacks:
        assert services.sweep_generations() == 2
    assert sorted(queued(callbacks)) == sorted([stale.pk, expired.pk])
    assert services.sweep_generations() == 1  # the expired lease is still expired; the stale row is fresh now


@pytest.mark.django_db
def test_the_sweep_fails_rows_that_reached_the_attempts_cap(fake):
    study = make_llm_study(url=fake.url, vignettes=1)
    services.start_collection(study=study, samples=1)
    cap = services.call_settings()["max_attempts"]
    Generation.objects.update(attempts=cap, queued_at=timezone.now() - timedelta(hours=1))
    assert services.sweep_generations() == 0
    assert Generation.objects.get().status == "failed"


@pytest.mark.django_db
def test_the_task_runs_the_service_in_process(fake):
    from llm_collect import tasks

    study = make_llm_study(url=fake.url, vignettes=1)
    run = services.start_collection(study=study, samples=1)
    gen = Generation.objects.get(run=run)
    assert tasks.collect.run(gen.pk) == "done"
    assert tasks.collect.run(gen.pk) == "skipped"
    assert len(fake.requests) == 1
