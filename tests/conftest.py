"""Shared fixtures: small studies built with objects.create, and the backends the suite runs on."""

import os
from contextlib import contextmanager

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API beside live_server

from surveys.models import Question, Study, System, Vignette
from surveys.services.answer_records import create_answer
from surveys.services.answer_shape import FeatureIn
from tests.worker_services import give_this_worker_its_own_redis_database

give_this_worker_its_own_redis_database()  # before any test, Celery connection or subprocess uses Redis

QUESTION_KEYS = ["features", "weighting", "reasons", "conclusion", "additional_info"]


def pytest_collection_modifyitems(config, items):
    # CI sets REQUIRE_SERVICES=1: a test that needs PostgreSQL or Redis must run, never skip.
    from django.db import connection

    on_postgres = connection.vendor == "postgresql"
    has_redis = bool(os.environ.get("REDIS_URL"))
    required = os.environ.get("REQUIRE_SERVICES") == "1"
    has_r = not any(item.get_closest_marker("r") for item in items) or _r_packages_installed()
    for item in items:
        if item.get_closest_marker("r") and not has_r and not required:
            item.add_marker(
                pytest.mark.skip(reason="needs Rscript with BradleyTerry2, brglm, sandwich, clubSandwich and mvtnorm")
            )
        if "postgres" in item.keywords and not on_postgres and not required:
            item.add_marker(pytest.mark.skip(reason="needs PostgreSQL: set DATABASE_URL"))
        if "redis" in item.keywords and not has_redis and not required:
            item.add_marker(pytest.mark.skip(reason="needs Redis: set REDIS_URL"))


def _r_packages_installed() -> bool:
    import shutil
    import subprocess

    check = 'quit(status = !all(sapply(c("BradleyTerry2", "brglm", "sandwich", "clubSandwich", "mvtnorm"), requireNamespace, quietly = TRUE)))'
    return (
        bool(shutil.which("Rscript")) and subprocess.run(["Rscript", "-e", check], capture_output=True).returncode == 0
    )


def make_study(
    *, slug="s1", systems=("alpha", "beta", "gamma"), vignettes=3, reference="alpha", selected=True, **design
):
    """A draft study with `systems`, `vignettes` vignettes, the five questions and one answer each."""
    design.setdefault("vignettes_per_participant", min(5, vignettes))
    if design.get("prolific_study_id"):  # as if 'Create or update Prolific draft' had made it (prolific/ownership.py)
        design.setdefault("prolific_link", Study.ProlificLink.CREATED)
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
                features=[
                    FeatureIn(feature="honesty", weight=60, reason="it matters"),
                    FeatureIn(feature="harm", weight=40, reason="it hurts"),
                ],
                action=f"{system.key} acts on {vignette.key}",
                additional_information="more facts",
                selected=selected,
            )
    study.reference_system = next((s for s in made_systems if s.key == reference), None)
    study.save()
    return study


@contextmanager
def data_fix(study):
    """Change a live study's content as an operator's data fix does: the freeze lifted, then the snapshot replaced."""
    from surveys.models.freeze import freeze_lifted
    from surveys.services.snapshots import replace_snapshot

    with freeze_lifted():
        yield
    replace_snapshot(study=study, reason="a test's content")


@pytest.fixture
def study(db):
    return make_study()


def fabricate_judgments(
    study,
    abilities,
    *,
    participants=60,
    seed=1,
    pid_prefix="P",
    status="completed",
    exclusion="",
    is_preview=False,
    order_effect=0.0,
    demographics=None,
    set_abilities=None,
):
    """Valid-looking judges with their assignments and judgments, drawn from known abilities.

    `abilities` maps system key to log-ability; P(first shown wins) = expit(l_first - l_second +
    order_effect); `set_abilities` maps a vignette set to the abilities on its vignettes (the rest: `abilities`).
    The study must be live (its cells built). Each judge sees k different vignettes,
    one random cell each, in a random order. Cell counters are left alone. Returns the participants.
    """
    from datetime import timedelta

    import numpy as np
    from django.utils import timezone

    from surveys.models import Assignment, Cell, Judgment, Participant

    rng = np.random.default_rng(seed)
    now = timezone.now()
    cells_by_vignette = {}
    for cell in Cell.objects.filter(study=study).select_related("answer_a__system", "answer_b__system"):
        cells_by_vignette.setdefault(cell.vignette_id, []).append(cell)
    vignettes = sorted(cells_by_vignette)
    k = min(study.vignettes_per_participant, len(vignettes))
    seconds = rng.uniform(240, 1500, size=participants)
    people = Participant.objects.bulk_create(
        Participant(
            study=study,
            prolific_pid=f"{pid_prefix}{n:05d}",
            status=status,
            exclusion=exclusion,
            is_preview=is_preview,
            consented_at=now,
            anonymised_data_consent=True,
            seconds_total=float(seconds[n]),
            demographics=(demographics or (lambda n: {}))(n),
            started_at=now - timedelta(seconds=float(seconds[n]) + 180),
            finished_at=now,
        )
        for n in range(participants)
    )
    assignments, shown = [], []
    for person in people:
        for position, vignette in enumerate(rng.permutation(vignettes)[:k], start=1):
            options = cells_by_vignette[int(vignette)]
            cell = options[int(rng.integers(len(options)))]
            first, second = (cell.answer_a, cell.answer_b) if rng.random() < 0.5 else (cell.answer_b, cell.answer_a)
            assignments.append(
                Assignment(
                    participant=person,
                    cell=cell,
                    vignette_id=cell.vignette_id,
                    first_answer=first,
                    second_answer=second,
                    position=position,
                    status=Assignment.Status.COMPLETED,
                    counts_toward_cell=False,
                    expires_at=now,
                    completed_at=now,
                    seconds=float(rng.uniform(30, 300)),
                )
            )
            shown.append((first, second))
    assignments = Assignment.objects.bulk_create(assignments)
    set_of = dict(study.vignettes.values_list("id", "set"))
    judgments = []
    for question in study.questions.all():
        for assignment, (first, second) in zip(assignments, shown, strict=True):
            these = (set_abilities or {}).get(set_of[assignment.vignette_id], abilities)
            eta = these[first.system.key] - these[second.system.key] + order_effect
            first_wins = rng.random() < 1.0 / (1.0 + np.exp(-eta))
            judgments.append(
                Judgment(
                    assignment=assignment,
                    question=question,
                    winner=first if first_wins else second,
                    loser=second if first_wins else first,
                    winner_position=Judgment.Position.FIRST if first_wins else Judgment.Position.SECOND,
                    seconds_on_page=assignment.seconds,
                )
            )
    Judgment.objects.bulk_create(judgments, batch_size=2000)
    return people


def make_judged_study(*, slug="judged", abilities=None, participants=60, seed=1, **design):
    """A live study (three systems, three vignettes) with judgments from known abilities."""
    from surveys.services.lifecycle import go_live

    abilities = abilities or {"alpha": 0.0, "beta": 0.8, "gamma": -0.6}
    design.setdefault("vignettes_per_participant", 3)
    study = make_study(slug=slug, systems=tuple(abilities), reference=next(iter(abilities)), **design)
    study = go_live(study=study)
    fabricate_judgments(study, abilities, participants=participants, seed=seed)
    return study


@pytest.fixture
def staff_client(client, db):
    """The test client, signed in as a staff user (a researcher without admin rights) who owns every study
    the test makes, as the researcher who creates a study does (tests/test_teams.py checks the others)."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("staff", password="pw-for-tests-1", is_staff=True)
    client.force_login(user)
    with owner_of_every_study(user):
        yield client


@contextmanager
def owner_of_every_study(user):
    """While open, `user` is the owner of every study that exists or is created."""
    from django.db.models.signals import post_save

    from surveys.models import StudyMembership

    def join(sender, instance, created, **kwargs):
        if created:
            StudyMembership.objects.create(study=instance, user=user, role=StudyMembership.Role.OWNER)

    for existing in Study.objects.exclude(memberships__user=user):
        StudyMembership.objects.create(study=existing, user=user, role=StudyMembership.Role.OWNER)
    post_save.connect(join, sender=Study, weak=False, dispatch_uid=f"owner-{user.pk}")
    try:
        yield user
    finally:
        post_save.disconnect(sender=Study, dispatch_uid=f"owner-{user.pk}")


@pytest.fixture
def researcher(client, db):
    """A superuser researcher, signed in on the test client."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("res", password="pw-for-tests-1", is_staff=True, is_superuser=True)
    client.force_login(user)
    return user


def at_once(*calls) -> list:
    """Run the calls in threads released together; returns their exceptions (None when fine)."""
    import threading

    from django.db import connection

    barrier = threading.Barrier(len(calls))
    outcomes: list = [None] * len(calls)

    def run(index, call):
        try:
            barrier.wait()
            call()
        except Exception as exc:
            outcomes[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


@pytest.fixture(autouse=True)
def fake_providers_allowed(settings):
    """The fake LLM providers run on 127.0.0.1: the suite lists it, as a deployment lists its self-hosted servers
    (llm_collect/keys.py; nothing loopback, private or link-local is reached unless listed)."""
    settings.LLM_ALLOWED_HOSTS = ["127.0.0.1"]


@pytest.fixture(autouse=True)
def entry_rate_limit_off(settings):
    """The suite enters many participants from 127.0.0.1: the entry rate limit is off unless a test sets it."""
    settings.ENTRY_RATE_LIMIT = "off"


@pytest.fixture(autouse=True)
def no_cached_snapshots_from_other_tests():
    """A slug's language is cached for minutes (services/live_content.py): each test's studies start afresh."""
    from django.core.cache import caches

    snapshots = caches["snapshots"]
    redis_cache = getattr(snapshots, "_cache", None)
    if hasattr(redis_cache, "get_client"):
        # Only the cache's own keys: under xdist the cache shares its worker's broker database (worker_services.py),
        # and clear() would FLUSHDB it, wiping the queues' bindings under a running Celery worker.
        client = redis_cache.get_client(write=True)
        keys = list(client.scan_iter(match=f"{snapshots.key_prefix}:*"))
        if keys:
            client.delete(*keys)
    else:
        snapshots.clear()
    caches["rendered"].clear()


@pytest.fixture(autouse=True)
def no_shown_minutes_from_other_tests():
    """The consent page's minutes are kept per process for a minute (services/duration.py): each test starts afresh."""
    from surveys.services import duration

    duration._shown.clear()
