"""Shared fixtures: small studies built with objects.create, and the backends the suite runs on."""

import os

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API beside live_server

from surveys.answers import FeatureIn, create_answer  # noqa: E402
from surveys.models import Question, Study, System, Vignette  # noqa: E402

QUESTION_KEYS = ["features", "weighting", "reasons", "conclusion", "additional_info"]


def pytest_collection_modifyitems(config, items):
    # CI sets REQUIRE_SERVICES=1: a test that needs PostgreSQL or Redis must run, never skip.
    from django.db import connection

    on_postgres = connection.vendor == "postgresql"
    has_redis = bool(os.environ.get("REDIS_URL"))
    required = os.environ.get("REQUIRE_SERVICES") == "1"
    for item in items:
        if "postgres" in item.keywords and not on_postgres and not required:
            item.add_marker(pytest.mark.skip(reason="needs PostgreSQL: set DATABASE_URL"))
        if "redis" in item.keywords and not has_redis and not required:
            item.add_marker(pytest.mark.skip(reason="needs Redis: set REDIS_URL"))


def make_study(
    *, slug="s1", systems=("alpha", "beta", "gamma"), vignettes=3, reference="alpha", selected=True, **design
):
    """A draft study with `systems`, `vignettes` vignettes, the five questions and one answer each."""
    design.setdefault("vignettes_per_participant", min(5, vignettes))
    study = Study.objects.create(slug=slug, name=f"Study {slug}", **design)
    for position, key in enumerate(QUESTION_KEYS):
        Question.objects.create(study=study, key=key, text=f"Which answer is better on {key}?", position=position)
    made_systems = [
        System.objects.create(study=study, key=key, label=key.title(), kind="human", position=position)
        for position, key in enumerate(systems)
    ]
    made_vignettes = [
        Vignette.objects.create(study=study, key=f"v{n}", character=f"Sam{n}", text=f"Vignette {n} text.", position=n)
        for n in range(1, vignettes + 1)
    ]
    for system in made_systems:
        for vignette in made_vignettes:
            create_answer(
                system=system,
                vignette=vignette,
                features=[FeatureIn("honesty", 60, "it matters"), FeatureIn("harm", 40, "it hurts")],
                action=f"{system.key} acts on {vignette.key}",
                additional_information="more facts",
                selected=selected,
            )
    study.reference_system = next((s for s in made_systems if s.key == reference), None)
    study.save()
    return study


@pytest.fixture
def study(db):
    return make_study()
