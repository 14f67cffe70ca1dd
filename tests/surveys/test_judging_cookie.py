"""A judge's browser is known by a signed cookie: a forged or borrowed one is refused, a reload keeps the place."""

import pytest

from surveys.models import Participant
from tests.surveys.test_judging_flow import csrf_client, link, live_study, through_demographics


@pytest.mark.django_db
def test_a_cookie_naming_another_judge_without_the_signature_is_refused():
    study = live_study()
    judge = csrf_client()
    through_demographics(judge, study)
    someone = Participant.objects.get()
    intruder = csrf_client()
    intruder.cookies[f"judging-{study.slug}"] = str(someone.pk)  # the id alone, unsigned
    response = intruder.get(f"/s/{study.slug}/pair/1/")
    assert response.status_code == 403
    assert b"could not find your place" in response.content


@pytest.mark.django_db
def test_a_signed_cookie_of_one_study_does_not_open_another():
    first, second = live_study(slug="first"), live_study(slug="second")
    judge = csrf_client()
    through_demographics(judge, first)
    cookie = judge.cookies[f"judging-{first.slug}"].value
    other = csrf_client()
    other.cookies[f"judging-{second.slug}"] = cookie  # signed for the first study's name
    assert other.get(f"/s/{second.slug}/pair/1/").status_code == 403


@pytest.mark.django_db
def test_opening_the_link_again_keeps_the_judge_on_their_page_without_a_new_participant():
    study = live_study()
    judge = csrf_client()
    through_demographics(judge, study)
    response = judge.get(link(study))
    assert response.url == f"/s/{study.slug}/pair/1/"
    assert f"judging-{study.slug}" not in response.cookies  # nothing changed: nothing written
    assert Participant.objects.count() == 1
