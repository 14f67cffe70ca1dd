"""A live study is one snapshot (issue 33): every process shows it, and a data fix replaces it everywhere at once."""

import pytest
from django.core.cache import caches
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.db.models import RestrictedError
from django.test import override_settings

from surveys.models import AuditEvent, Participant, Study, StudySnapshot, Vignette
from surveys.models.freeze import freeze_lifted
from surveys.services.lifecycle import go_live
from surveys.services.previews import write_preview
from tests.conftest import make_study
from tests.surveys.test_judging_flow import csrf_client, through_demographics


def process_caches(name: str) -> dict:
    """The caches one web process would have: its own memory for both (another LOCATION is another process)."""
    memory = "django.core.cache.backends.locmem.LocMemCache"
    return {
        "default": {"BACKEND": memory, "LOCATION": f"{name}-default"},
        "snapshots": {"BACKEND": memory, "LOCATION": f"{name}-snapshots"},
        "rendered": {"BACKEND": memory, "LOCATION": f"{name}-rendered"},
    }


def vignette_shown(client, url: str) -> str:
    html = client.get(url).content.decode()
    return html.split('<div class="vignette-text" dir="auto"><p>')[1].split("</p>")[0]


@pytest.mark.django_db
def test_a_data_fix_is_shown_by_every_process_once_the_snapshot_is_replaced_and_the_trail_says_so(capsys):
    study = go_live(study=make_study(vignettes=1, vignettes_per_participant=1))
    client = csrf_client()
    url = through_demographics(client, study).url
    first, second = process_caches("first"), process_caches("second")
    for caches_of in (first, second):  # both processes have shown the page: its content is in their caches
        with override_settings(CACHES=caches_of):
            assert vignette_shown(client, url) == "Vignette 1 text."

    with freeze_lifted():  # the operator's fix
        Vignette.objects.filter(study=study).update(text="Vignette 1 text, fixed.")
    for caches_of in (first, second):  # not shown until the snapshot is replaced: the page is the snapshot's
        with override_settings(CACHES=caches_of):
            assert vignette_shown(client, url) == "Vignette 1 text."

    call_command("replace_snapshot", study.slug, "--reason", "typo in v1")

    for caches_of in (first, second):
        with override_settings(CACHES=caches_of):
            assert vignette_shown(client, url) == "Vignette 1 text, fixed."
    assert "changed: vignette" in capsys.readouterr().out
    event = AuditEvent.objects.get(action=AuditEvent.Action.SNAPSHOT_REPLACED)
    assert event.details["reason"] == "typo in v1"
    assert event.details["changed"] == [f"vignette {study.vignettes.get().pk}"]
    new = StudySnapshot.objects.get(pk=event.details["new"])
    assert str(new.replaces_id) == event.details["old"]
    assert Participant.objects.count() == 1


@pytest.mark.django_db
def test_the_snapshot_cache_is_shared_through_redis_when_it_is_configured(settings):
    if not settings.REDIS_URL:
        pytest.skip("needs Redis: set REDIS_URL")
    study = go_live(study=make_study(vignettes=1, vignettes_per_participant=1))
    assert settings.CACHES["snapshots"]["BACKEND"].endswith("RedisCache")
    client = csrf_client()
    url = through_demographics(client, study).url
    assert vignette_shown(client, url) == "Vignette 1 text."
    key = f"snapshot:{study.snapshot_id}:vignette:{study.vignettes.get().pk}"
    other_host = caches.create_connection("snapshots")  # a second client, as another host has
    assert other_host.get(key)["text"] == "Vignette 1 text."


@pytest.mark.django_db
def test_replacing_a_drafts_snapshot_is_refused_with_the_reason():
    study = make_study()
    with pytest.raises(Exception, match="is a draft"):
        call_command("replace_snapshot", study.slug, "--reason", "x")


@pytest.mark.django_db
def test_a_study_past_draft_cannot_be_left_without_its_snapshot():
    study = go_live(study=make_study(vignettes=1, vignettes_per_participant=1))
    with pytest.raises(RestrictedError):  # its own snapshot goes only with the study
        StudySnapshot.objects.get(pk=study.snapshot_id).delete()
    with pytest.raises(IntegrityError, match="study_shown_from_a_snapshot_once_live"), transaction.atomic():
        Study.objects.filter(pk=study.pk).update(snapshot=None)
    draft = make_study(slug="draft")
    write_preview(study=draft)
    draft.delete()  # a draft goes with its preview snapshots
    assert list(StudySnapshot.objects.values_list("study", flat=True)) == [study.pk]
