"""Preview a draft in each of its languages before it is live (issue 33): the judging pages, nothing recorded."""

import pytest
from django.urls import reverse

from surveys.models import Answer, Cell, EntryAttempt, Judgment, Participant, StudySnapshot
from surveys.services.previews import write_preview
from tests.conftest import make_study

pytestmark = pytest.mark.django_db


def german_draft():
    study = make_study(vignettes=2, vignettes_per_participant=2, selected=False)
    study.questions.filter(key="features").update(translations={"de": {"text": "Welche Antwort erkennt mehr?"}})
    study.vignettes.filter(key="v1").update(translations={"de": {"text": "Ein Kind findet eine Geldbörse."}})
    return study


def test_a_researcher_walks_a_drafts_judging_pages_in_german_and_nothing_is_recorded(client, researcher):
    study = german_draft()
    start = client.get(reverse("surveys:judging-entry", args=[study.slug]) + "preview/")
    assert "Start a preview" in start.content.decode()
    languages = client.post(f"/s/{study.slug}/preview/", follow=True).content.decode()
    snapshot = StudySnapshot.objects.get(study=study, kind=StudySnapshot.Kind.PREVIEW)
    assert 'id="language-en"' in languages
    assert 'id="language-de"' in languages
    german = languages.split('id="language-de"')[1]
    assert "vignette v2 is not translated" in german
    assert "vignette v1 is not translated" not in german
    assert "question features" not in german  # translated

    base = f"/s/{study.slug}/preview/{snapshot.pk}/de"
    consent = client.get(f"{base}/consent/")
    assert consent["Content-Language"] == "de"
    assert "Researcher preview" not in consent.content.decode()  # the banner is in German
    step = client.post(f"{base}/consent/", {"consent": "yes", "anonymised": "yes"})
    assert step.url == f"{base}/about-you/"
    pair = client.get(f"{base}/pair-1/").content.decode()
    assert "Ein Kind findet eine Geldbörse." in pair
    assert "Welche Antwort erkennt mehr?" in pair
    assert "Szenario 1 von 2" in pair
    refused = client.post(f"{base}/pair-1/", {})
    assert refused.status_code == 200  # the page again, with the judge's error messages
    picks = {question.key: "first" for question in study.questions.all()}
    assert client.post(f"{base}/pair-1/", picks).url == f"{base}/pair-2/"
    assert client.post(f"{base}/pair-2/", picks).url == f"{base}/check/"
    assert client.post(f"{base}/check/", {"choice": "2"}).url == f"{base}/done/"
    assert client.get(f"{base}/done/").status_code == 200

    assert not Participant.objects.exists()
    assert not Cell.objects.exists()
    assert not Judgment.objects.exists()
    assert not EntryAttempt.objects.exists()
    assert not Answer.objects.filter(selected=True).exists()  # lone answers are shown, not selected


def test_only_the_studys_team_may_preview_it(client, django_user_model):
    study = make_study()
    outsider = django_user_model.objects.create_user("out", password="x", is_staff=True)
    client.force_login(outsider)
    assert client.get(f"/s/{study.slug}/preview/").status_code == 404
    client.logout()
    assert client.get(f"/s/{study.slug}/preview/").status_code == 302  # to the sign-in page


def test_the_admin_page_and_the_dashboard_link_to_the_preview(client, researcher):
    study = make_study()
    for url in (f"/admin/surveys/study/{study.pk}/change/", f"/dashboard/{study.slug}/"):
        assert f'href="/s/{study.slug}/preview/"' in client.get(url).content.decode(), url


def test_the_answer_writing_preview_speaks_the_language_asked_for(client, researcher):
    study = german_draft()
    page = client.get(f"/r/{study.slug}/preview/?lang=de")
    assert page["Content-Language"] == "de"
    assert "Ein Kind findet eine Geldbörse." in page.content.decode()


def test_the_answer_writing_preview_of_a_snapshot_shows_what_that_previews_judges_see(client, researcher):
    study = german_draft()
    languages = client.post(f"/s/{study.slug}/preview/", follow=True).content.decode()
    snapshot = StudySnapshot.objects.get(study=study, kind=StudySnapshot.Kind.PREVIEW)
    writer = f"/r/{study.slug}/preview/?lang=de&amp;snapshot={snapshot.pk}"
    assert writer in languages
    study.vignettes.filter(key="v1").update(translations={"de": {"text": "Nach der Vorschau geändert."}})

    from_snapshot = client.get(writer.replace("&amp;", "&")).content.decode()
    assert "Ein Kind findet eine Geldbörse." in from_snapshot  # as on the preview's judging pages
    assert "Nach der Vorschau geändert." not in from_snapshot
    # Without a preview's snapshot (the respondents' admin page links so): the draft's rows as they are now.
    assert "Nach der Vorschau geändert." in client.get(f"/r/{study.slug}/preview/?lang=de").content.decode()


def test_only_the_studys_team_previews_its_writing_page_and_only_its_own_snapshots(client, django_user_model):
    study, other = make_study(), make_study(slug="other")
    outsider = django_user_model.objects.create_user("out", password="x", is_staff=True)
    client.force_login(outsider)
    assert client.get(f"/r/{study.slug}/preview/").status_code == 404
    client.force_login(django_user_model.objects.create_superuser("boss", "b@example.org", "pw-long-enough"))
    theirs = write_preview(study=other)
    assert client.get(f"/r/{study.slug}/preview/?snapshot={theirs.pk}").status_code == 404
    assert client.get(f"/r/{study.slug}/preview/?snapshot=not-a-uuid").status_code == 404
    assert client.get(f"/r/{other.slug}/preview/?snapshot={theirs.pk}").status_code == 200
