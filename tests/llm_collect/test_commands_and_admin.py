"""Operator entry points: the management commands and the researcher's admin pages."""

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from llm_collect import services
from llm_collect.models import CollectionRun, Generation
from surveys.models import AuditEvent

from .conftest import make_llm_study, queued


@pytest.mark.django_db
def test_collect_answers_starts_a_run_for_the_chosen_systems(fake, capsys):
    make_llm_study(url=fake.url, providers=["openai", "gemini"], vignettes=2)
    call_command("collect_answers", "llm", "--systems", "m1", "--samples", "3")
    assert "6 generations queued, 0 already answered" in capsys.readouterr().out
    run = CollectionRun.objects.get()
    assert run.planned == 6
    assert list(run.systems.values_list("key", flat=True)) == ["m1"]


@pytest.mark.django_db
def test_collect_answers_names_a_missing_study_or_key(fake, monkeypatch):
    with pytest.raises(CommandError, match="No study"):
        call_command("collect_answers", "nope")
    make_llm_study(url=fake.url, vignettes=1)
    monkeypatch.delenv("FAKE_LLM_API_KEY")
    with pytest.raises(CommandError, match="FAKE_LLM_API_KEY"):
        call_command("collect_answers", "llm")


@pytest.mark.django_db
def test_self_similarity_prints_one_line_per_model(fake, capsys):
    study = make_llm_study(url=fake.url, vignettes=1)
    run = services.start_collection(study=study, samples=2)
    for gen in Generation.objects.filter(run=run):
        services.collect(generation_id=gen.pk)
    call_command("self_similarity", "llm")
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "system\ttfidf"
    assert out.splitlines()[1].startswith("m0\t0.")


@pytest.mark.django_db
def test_the_admin_start_page_needs_a_staff_login(client):
    url = reverse("admin:llm_collect_collectionrun_start")
    response = client.get(url)
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


@pytest.mark.django_db
def test_a_researcher_starts_a_collection_in_the_admin_and_sees_its_progress(fake, admin_client):
    study = make_llm_study(url=fake.url, vignettes=2)
    form = {"study": study.pk, "systems": "", "samples": 2}
    page = admin_client.post(reverse("admin:llm_collect_collectionrun_start"), form).content.decode()
    # First what it would ask and cost: 2 vignettes × 2 samples, the model never asked before.
    assert "Nothing has been asked yet" in page
    assert "<td>4</td><td>4 calls; no earlier call to estimate from" in page
    assert 'value="Start collecting"' in page
    assert not CollectionRun.objects.exists()

    response = admin_client.post(reverse("admin:llm_collect_collectionrun_start"), {**form, "confirmed": "yes"})
    run = CollectionRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:llm_collect_collectionrun_change", args=[run.pk])
    gen = Generation.objects.filter(run=run).first()
    services.collect(generation_id=gen.pk)
    page = admin_client.get(reverse("admin:llm_collect_collectionrun_changelist")).content.decode()
    assert "Collect answers for a study" in page
    assert "1 done · 0 invalid · 0 failed · 0 running · 3 pending" in page
    detail = admin_client.get(response["Location"]).content.decode()
    assert "400 / 200" in detail
    assert "largest-remainder" in detail


@pytest.mark.django_db
def test_the_admin_start_page_shows_a_missing_key_and_loses_nothing(fake, admin_client, monkeypatch):
    study = make_llm_study(url=fake.url, vignettes=1)
    monkeypatch.delenv("FAKE_LLM_API_KEY")
    response = admin_client.post(
        reverse("admin:llm_collect_collectionrun_start"), {"study": study.pk, "systems": "m0", "samples": 4}
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert page.count("FAKE_LLM_API_KEY") == 1
    assert 'value="m0"' in page
    assert 'value="4"' in page
    assert not CollectionRun.objects.exists()


@pytest.mark.django_db
def test_the_run_page_states_the_weights_policy_as_readable_paragraphs(fake, admin_client):
    study = make_llm_study(url=fake.url, vignettes=1)
    run = services.start_collection(study=study, samples=1)
    page = admin_client.get(reverse("admin:llm_collect_collectionrun_change", args=[run.pk])).content.decode()
    assert "<p>What happens to weights that do not sum to 100 (the decision, also shown in the admin): when" in page
    assert "``" not in page
    assert "the Generation is marked normalised and keeps the original weights" in page


@pytest.mark.django_db
def test_the_start_page_warns_when_the_calls_would_run_inside_the_request(admin_client, settings):
    url = reverse("admin:llm_collect_collectionrun_start")
    settings.CELERY_TASK_ALWAYS_EAGER = True
    assert "No task broker is set" in admin_client.get(url).content.decode()
    settings.CELERY_TASK_ALWAYS_EAGER = False
    assert "No task broker" not in admin_client.get(url).content.decode()


@pytest.mark.django_db
def test_model_output_is_escaped_in_the_generation_admin(admin_client):
    from tests.fakes.llm_servers import FakeLLMServer

    markup = '{"features": [{"feature": "<script>alert(1)</script>", "weight": 100, "reason": "x"}], "action": "a"}'
    with FakeLLMServer(default={"text": markup}) as server:
        study = make_llm_study(url=server.url, vignettes=1)
        run = services.start_collection(study=study, samples=1)
        gen = Generation.objects.get(run=run)
        services.collect(generation_id=gen.pk)
    page = admin_client.get(reverse("admin:llm_collect_generation_change", args=[gen.pk])).content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.django_db
def test_the_retry_action_asks_failed_rows_again(fake, admin_client, django_capture_on_commit_callbacks):
    study = make_llm_study(url=fake.url, vignettes=1)
    services.start_collection(study=study, samples=1)
    Generation.objects.update(status="failed", attempts=5)
    gen = Generation.objects.get()
    Generation.objects.create(system=gen.system, vignette=gen.vignette, sample=2, status="done", cost_estimate="0.012")
    ask = {"action": "retry", "_selected_action": [gen.pk]}
    page = admin_client.post(reverse("admin:llm_collect_generation_changelist"), ask).content.decode()
    assert "≈ $0.01 (1 calls × $0.0120, the mean of 1 earlier calls)" in page
    assert Generation.objects.get(pk=gen.pk).status == "failed"  # nothing asked before the confirmation

    with django_capture_on_commit_callbacks() as callbacks:
        admin_client.post(reverse("admin:llm_collect_generation_changelist"), {**ask, "confirmed": "yes"})
    gen.refresh_from_db()
    assert gen.status == "pending"
    assert gen.attempts == 0
    assert len(queued(callbacks)) == 1
    event = AuditEvent.objects.get(action=AuditEvent.Action.COLLECTION_RETRIED)
    assert event.details["generations"] == [gen.pk]


@pytest.mark.django_db
def test_staff_without_the_permission_cannot_start_a_collection(client, django_user_model):
    user = django_user_model.objects.create_user("viewer", password="pw", is_staff=True)
    client.force_login(user)
    assert client.get(reverse("admin:llm_collect_collectionrun_start")).status_code == 403


@pytest.mark.django_db
def test_self_similarity_adds_the_embedding_measure_when_installed(fake, capsys):
    from llm_collect.similarity import embeddings_available

    if not embeddings_available():
        pytest.skip("needs requirements-embeddings.txt")
    study = make_llm_study(url=fake.url, vignettes=1)
    run = services.start_collection(study=study, samples=2)
    for gen in Generation.objects.filter(run=run):
        services.collect(generation_id=gen.pk)
    call_command("self_similarity", "llm", "--embeddings")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "system\ttfidf\tembedding"
    tfidf, embedding = (float(x) for x in lines[1].split("\t")[1:])
    assert 0 < tfidf <= 1
    assert 0 < embedding <= 1
