"""The answer admin: feature positions fill themselves, and a broken database rule is said in words."""

import pytest
from django.urls import reverse

from surveys.models import Answer
from tests.surveys.test_admin import _answer_form, _FormFields


def _features(answer: Answer) -> list[tuple]:
    return list(answer.features.order_by("position").values_list("position", "feature", "weight"))


def _add_rows(data: dict, rows: list[tuple[str, str]]) -> dict:
    start = int(data["features-TOTAL_FORMS"])
    for offset, (feature, weight) in enumerate(rows):
        data.update({f"features-{start + offset}-feature": feature, f"features-{start + offset}-weight": weight})
        data[f"features-{start + offset}-reason"] = ""
    data["features-TOTAL_FORMS"] = str(start + len(rows))
    return data


@pytest.mark.django_db
@pytest.mark.usefixtures("researcher")
def test_a_new_answer_gets_feature_positions_one_to_n_in_page_order(client, study):
    system, vignette = study.systems.get(key="alpha"), study.vignettes.get(key="v1")
    url = reverse("admin:surveys_answer_add")
    fields = _FormFields()
    fields.feed(client.get(url).content.decode())
    data = {name: value for name, value in fields.data.items() if name != "csrfmiddlewaretoken"}
    data.update({"system": system.pk, "vignette": vignette.pk, "sample": "2", "action": "Act.", "origin": "admin"})
    _add_rows(data, [("fairness", "50"), ("harm", "30"), ("honesty", "20")])
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    answer = Answer.objects.get(system=system, vignette=vignette, sample=2)
    assert _features(answer) == [(1, "fairness", 50), (2, "harm", 30), (3, "honesty", 20)]


@pytest.mark.django_db
@pytest.mark.usefixtures("researcher")
def test_deleting_a_feature_closes_the_gap_and_a_new_row_comes_last(client, study):
    answer = Answer.objects.filter(vignette__study=study).first()  # honesty 60 at 1, harm 40 at 2
    url, data = _answer_form(client, answer)
    data.update({"features-0-DELETE": "on", "_save": "Save"})  # harm, untouched, moves up to 1
    _add_rows(data, [("fairness", "60")])
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert _features(answer) == [(1, "harm", 40), (2, "fairness", 60)]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"sample": "0"}, "The sample number is a whole number of at least 1."),
        ({"features-0-weight": "101", "features-1-weight": "-1"}, "A weight is a whole number from 1 to 100."),
    ],
)
@pytest.mark.usefixtures("researcher")
def test_a_broken_database_rule_is_a_form_error_in_words_not_a_constraint_name(client, study, change, words):
    answer = Answer.objects.filter(vignette__study=study).first()
    url, data = _answer_form(client, answer)
    response = client.post(url, {**data, **change, "_save": "Save"})
    page = response.content.decode()
    assert response.status_code == 200
    assert words in page
    assert "Constraint" not in page
    assert "feature_weight_0_100" not in page
    assert "answer_sample_positive" not in page
    answer.refresh_from_db()
    assert answer.sample == 1
    assert _features(answer) == [(1, "honesty", 60), (2, "harm", 40)]


# An answer's system and vignette belong to its study (issue 9, item 7)


@pytest.mark.django_db
@pytest.mark.usefixtures("researcher")
def test_the_admin_refuses_an_answer_whose_system_and_vignette_belong_to_different_studies(client, study):
    from tests.conftest import make_study

    other = make_study(slug="other")
    url = reverse("admin:surveys_answer_add")
    fields = _FormFields()
    fields.feed(client.get(url).content.decode())
    data = {name: value for name, value in fields.data.items() if name != "csrfmiddlewaretoken"}
    system, foreign_vignette = study.systems.get(key="alpha"), other.vignettes.get(key="v1")
    data.update({"system": system.pk, "vignette": foreign_vignette.pk, "sample": "2", "action": "Act."})
    data["origin"] = "admin"
    _add_rows(data, [("fairness", "100")])
    response = client.post(url, data)
    assert response.status_code == 200
    assert "belong to different studies" in response.content.decode()
    assert not Answer.objects.filter(system=system, vignette=foreign_vignette).exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("researcher")
def test_the_answer_admins_dropdowns_name_the_study_and_offer_only_its_own_parts(client, study):
    from tests.conftest import make_study

    make_study(slug="other")
    html = client.get(reverse("admin:surveys_answer_add")).content.decode()
    assert "Alpha (s1)" in html
    assert "Alpha (other)" in html
    assert "v1 (s1)" in html
    assert "v1 (other)" in html
    answer = Answer.objects.filter(vignette__study=study).first()
    html = client.get(reverse("admin:surveys_answer_change", args=[answer.pk])).content.decode()
    assert "Alpha (s1)" in html
    assert "v2 (s1)" in html
    assert "(other)" not in html
    html = client.get(reverse("admin:surveys_answer_add") + f"?study={study.pk}").content.decode()
    assert "v1 (s1)" in html
    assert "(other)" not in html


@pytest.mark.django_db
def test_the_service_and_the_database_refuse_a_cross_study_answer(study):
    from django.core.exceptions import ValidationError
    from django.db import IntegrityError, transaction

    from surveys.services.answer_records import create_answer
    from surveys.services.answer_shape import FeatureIn
    from tests.conftest import make_study

    other = make_study(slug="other")
    system, foreign_vignette = study.systems.get(key="alpha"), other.vignettes.get(key="v1")
    with pytest.raises(ValidationError, match="different studies"):
        create_answer(
            system=system, vignette=foreign_vignette, features=[FeatureIn(feature="x", weight=100)], action="A"
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        Answer.objects.create(system=system, vignette=foreign_vignette, sample=9)
    answer = Answer.objects.filter(system=system).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Answer.objects.filter(pk=answer.pk).update(vignette=foreign_vignette)
    assert not Answer.objects.filter(system=system, vignette=foreign_vignette).exists()
