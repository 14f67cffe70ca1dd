"""Two studies compared: fitted jointly with the study as the set, judges distinct or shared, team-scoped."""

import pytest
from django.contrib.auth import get_user_model

from analysis.services.study_comparison import compare_studies
from surveys.models import Participant, StudyMembership, System

from .sets_study import make_study_with_sets

PUBLISHED = {"alpha": 0.0, "beta": 0.5, "gamma": 0.4}
NOVEL = {"alpha": 0.0, "beta": 0.5, "gamma": -0.8}


def experiment(slug, abilities, **kwargs):
    """A study of one kind of vignette (its sets both judged from `abilities`)."""
    return make_study_with_sets(slug=slug, set_abilities={"published": abilities, "novel": abilities}, **kwargs)


@pytest.fixture
def experiments(db):
    return (
        experiment("exp1", PUBLISHED, participants=80, seed=1, pid_prefix="A"),
        experiment("exp2", NOVEL, participants=80, seed=2, pid_prefix="B"),
    )


def test_two_studies_are_fitted_jointly_with_the_study_as_the_set(experiments):
    first, second = experiments
    compared = compare_studies(first=first, second=second)
    assert compared.systems == ["alpha", "beta", "gamma"]
    assert compared.shared_judges == 0
    assert "distinct" in compared.judges_in_words
    features = next(q for q in compared.questions if q.key == "features").by_set
    assert [one.set for one in features.sets] == ["exp1", "exp2"]
    gamma = next(d for d in features.differences if d.system == "gamma")
    assert gamma.ci_high < 0  # gamma is worse in the second experiment
    assert gamma.p_holm < 0.05
    assert gamma.df > 1
    beta = next(d for d in features.differences if d.system == "beta")
    assert beta.ci_low < 0 < beta.ci_high


def test_judges_who_took_part_in_both_studies_are_said_and_clustered_as_one(experiments):
    first, second = experiments
    ids = list(Participant.objects.filter(study=second).order_by("pk").values_list("pk", flat=True)[:30])
    for n, pk in enumerate(ids):  # 30 of the second study's judges are people from the first
        Participant.objects.filter(pk=pk).update(prolific_pid=f"A{n:05d}")
    compared = compare_studies(first=first, second=second)
    assert compared.shared_judges == 30
    assert "30 people judged in both studies" in compared.judges_in_words
    features = next(q for q in compared.questions if q.key == "features").by_set
    assert features.sets[0].n_judges + features.sets[1].n_judges == 160  # each study's judges, per study


def test_studies_with_different_references_are_refused_with_the_reason(staff_client, experiments):
    first, second = experiments
    second.reference_system = System.objects.get(study=second, key="beta")
    second.save()
    response = staff_client.get(f"/dashboard/{first.slug}/compared-with/{second.slug}/")
    assert response.status_code == 400
    assert "different references" in response.content.decode()


def test_the_page_shows_the_difference_table_and_what_was_done_with_the_judges(staff_client, experiments):
    first, second = experiments
    page = staff_client.get(f"/dashboard/{first.slug}/compared-with/{second.slug}/").content.decode()
    assert "Difference exp2 − exp1" in page
    assert "judges are distinct" in page
    gamma = next(
        d for d in compare_studies(first=first, second=second).questions[0].by_set.differences if d.system == "gamma"
    )
    assert f"[{gamma.ci_low:.2f}, {gamma.ci_high:.2f}]" in page
    dashboard = staff_client.get(f"/dashboard/{first.slug}/?compare={second.slug}").content.decode()
    assert f"/dashboard/{first.slug}/compared-with/{second.slug}/" in dashboard


def test_only_studies_the_user_may_see_can_be_compared(client, experiments):
    first, second = experiments
    url = f"/dashboard/{first.slug}/compared-with/{second.slug}/"
    assert client.get(url).status_code == 302  # login first
    user = get_user_model().objects.create_user("other", password="pw-for-tests-1", is_staff=True)
    StudyMembership.objects.create(study=first, user=user, role=StudyMembership.Role.OWNER)
    client.force_login(user)
    assert client.get(url).status_code == 404  # the second study is another team's


def test_the_api_gives_the_joint_fit_and_refuses_another_teams_study(staff_client, experiments):
    first, second = experiments
    body = staff_client.get(f"/api/studies/{first.slug}/compared-with/{second.slug}/").json()
    assert (body["first"], body["second"], body["shared_judges"]) == ("exp1", "exp2", 0)
    features = next(q for q in body["questions"] if q["question"] == "features")
    gamma = next(d for d in features["by_set"]["differences"] if d["system"] == "gamma")
    assert gamma["sets"] == ["exp1", "exp2"]
    assert gamma["ci_high"] < 0
    assert staff_client.get(f"/api/studies/{first.slug}/compared-with/nope/").status_code == 404
