"""Simulated judges for the demo: they take the judging survey through the same services as people do.

Each judge picks between two answers by a Bradley-Terry draw from the systems' assumed abilities,
so the demo dashboard shows estimates that mean something. Never used on a real study.
"""

import math
import random
import secrets
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.utils import timezone

from .. import constants
from ..judging import (
    CORRECT_ATTENTION_CHOICE,
    ProlificParams,
    current_step,
    enter_study,
    finish_participant,
    mark_shown,
    record_consent,
    record_demographics,
    record_page,
)
from ..models import Participant, Study


def simulate_judges(*, study: Study, judges: int, abilities: dict[str, float], seed: int = 0) -> int:
    """Run `judges` simulated participants through the survey; return how many completed."""
    if not study.is_live:
        raise ValidationError(f"Study '{study.slug}' is {study.status}: only a live study takes judges.")
    rng = random.Random(seed)
    questions = list(study.questions.all())
    completed = 0
    for _ in range(judges):
        participant = _judge_once(study=study, questions=questions, abilities=abilities, rng=rng)
        completed += participant.status == Participant.Status.COMPLETED
    return completed


def _judge_once(*, study, questions, abilities, rng) -> Participant:
    clock = timezone.now() - timedelta(hours=rng.uniform(1, 48))
    params = ProlificParams(
        secrets.token_hex(12), study.prolific_study_id or secrets.token_hex(12), secrets.token_hex(12)
    )
    participant = enter_study(study=study, params=params)
    # Simulated judges took the survey in the past: their timestamps say so, for honest medians.
    Participant.objects.filter(pk=participant.pk).update(started_at=clock)
    participant = record_consent(participant=participant, consent=True, anonymised=True)
    participant = record_demographics(participant=participant, demographics=_demographics(rng), now=clock)
    step = current_step(participant)
    while step.name == "pair":
        assignment = step.assignment
        mark_shown(assignment=assignment, now=clock)
        clock += timedelta(seconds=rng.uniform(60, 240))
        first = abilities.get(assignment.first_answer.system.key, 0.0)
        second = abilities.get(assignment.second_answer.system.key, 0.0)
        picks = {q.key: _pick(first, second, rng) for q in questions}
        record_page(participant=participant, assignment=assignment, picks=picks, questions=questions, now=clock)
        step = current_step(participant)
    if step.name == "attention":
        participant = finish_participant(participant=participant, attention_choice=CORRECT_ATTENTION_CHOICE, now=clock)
    return participant


def _pick(first: float, second: float, rng: random.Random) -> str:
    # A slight pull towards the first answer shown, as real judges have.
    chance_first = 1 / (1 + math.exp(-(first - second + 0.1)))
    return "first" if rng.random() < chance_first else "second"


def _demographics(rng: random.Random) -> dict:
    return {
        "gender": rng.choice(constants.GENDERS),
        "age": rng.choice(constants.AGE_GROUPS),
        "religion": rng.choice(constants.RELIGIONS),
        "education": rng.choice(constants.EDUCATION_LEVELS),
        "country": rng.choice(constants.COUNTRIES),
    }
