"""Simulated judges for the demo (`manage.py simulate_judges`): they take the judging survey through the
same services as people do.

Each judge picks between two answers by a Bradley-Terry draw from the systems' assumed abilities,
so the demo dashboard shows estimates that mean something. Never used on a real study.

The model is analysis.bradley_terry.simulate_judgments's: P(first wins) = expit(ability of first -
ability of second + answer effects + order effect), 1/2 for an inattentive judge. Abilities are
per question ("features:gpt-4o") or for every question ("gpt-4o"); each answer's effect on a
question is N(0, answer_sd^2), drawn from the seed, the question and the answer, so it stays the
same across calls with one seed. Inattentive judges pass the attention check (they are the ones
it misses) and pick at random.
"""

import random
import secrets
from dataclasses import dataclass, field
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.utils import timezone

from surveys import constants
from surveys.models import Participant, Study
from surveys.services.judging import (
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

from ..bradley_terry.simulation import first_wins_probability

ORDER_EFFECT = 0.1  # a slight pull towards the first answer shown, as real judges have


@dataclass(frozen=True)
class RaterModel:
    """How simulated judges pick: abilities ("question:system" or "system" -> log-odds, default 0),
    the order effect, the answer-level SD and the share of inattentive judges."""

    abilities: dict[str, float] = field(default_factory=dict)
    order_effect: float = ORDER_EFFECT
    answer_sd: float = 0.0
    inattentive: float = 0.0
    seed: int = 0

    def ability(self, question: str, system: str) -> float:
        return self.abilities.get(f"{question}:{system}", self.abilities.get(system, 0.0))

    def answer_effect(self, question: str, answer) -> float:
        """The answer's own pull on `question`, fixed per seed: drawn from its system and vignette keys, not its
        id, so a study imported into another database gets the same effects."""
        if self.answer_sd <= 0:
            return 0.0
        identity = f"{answer.system.key}/{answer.vignette.key}"
        return random.Random(f"{self.seed}:{question}:{identity}").gauss(0.0, self.answer_sd)

    def chance_first(self, *, question: str, first, second, attentive: bool) -> float:
        """P(the first answer shown wins) on `question`; first and second are Answers."""
        difference = (
            self.ability(question, first.system.key)
            - self.ability(question, second.system.key)
            + self.answer_effect(question, first)
            - self.answer_effect(question, second)
        )
        return float(first_wins_probability(difference, order_effect=self.order_effect, attentive=attentive))


def parse_abilities(items: list[str]) -> dict[str, float]:
    """["features:claude=-0.35", "gpt-4o=0.4"] -> {"features:claude": -0.35, "gpt-4o": 0.4}."""
    abilities = {}
    for item in items:
        key, sep, value = item.partition("=")
        try:
            abilities[key.strip()] = float(value)
        except ValueError:
            raise ValidationError(
                f"--ability takes [QUESTION:]SYSTEM=NUMBER, e.g. gpt-4o=0.4 or features:gpt-4o=0.4; got '{item}'."
            ) from None
        if not sep or not key.strip() or key.count(":") > 1:
            raise ValidationError(f"--ability takes [QUESTION:]SYSTEM=NUMBER, e.g. gpt-4o=0.4; got '{item}'.")
    return abilities


def check_names(*, study: Study, abilities: dict[str, float]) -> None:
    """Every question and system named in `abilities` belongs to the study (a typo is an error)."""
    systems = set(study.systems.values_list("key", flat=True))
    questions = set(study.questions.values_list("key", flat=True))
    for key in abilities:
        question, _, system = key.rpartition(":")
        if system not in systems:
            raise ValidationError(f"--ability names '{system}', not a system of '{study.slug}': {sorted(systems)}.")
        if question and question not in questions:
            raise ValidationError(
                f"--ability names '{question}', not a question of '{study.slug}': {sorted(questions)}."
            )


def simulate_judges(
    *,
    study: Study,
    judges: int,
    abilities: dict[str, float],
    seed: int = 0,
    order_effect: float = ORDER_EFFECT,
    answer_sd: float = 0.0,
    inattentive: float = 0.0,
    inattentive_ids: list[int] | None = None,
) -> int:
    """Run `judges` simulated participants through the survey; return how many completed.

    `inattentive_ids`, when given, receives the ids of the participants who picked at random (benchmarks
    and tests check the judge-quality flags against it)."""
    if not study.is_live:
        raise ValidationError(f"Study '{study.slug}' is {study.status}: only a live study takes judges.")
    if not 0 <= inattentive <= 1 or answer_sd < 0:
        raise ValidationError("The inattentive share is between 0 and 1 and the answer SD is not negative.")
    check_names(study=study, abilities=abilities)
    model = RaterModel(abilities, order_effect, answer_sd, inattentive, seed)
    rng = random.Random(seed)
    questions = list(study.questions.all())
    completed = 0
    # Allocation breaks its ties with the `random` module: seeded here too, the same seed gives the same
    # pages, whatever ran before in the process; the caller's random state is given back afterwards.
    state = random.getstate()
    random.seed(seed)
    try:
        for _ in range(judges):
            participant, attentive = _one_participant(study=study, questions=questions, model=model, rng=rng)
            completed += participant.status == Participant.Status.COMPLETED
            if inattentive_ids is not None and not attentive:
                inattentive_ids.append(participant.pk)
    finally:
        random.setstate(state)
    return completed


def _one_participant(*, study, questions, model: RaterModel, rng) -> tuple[Participant, bool]:
    clock = timezone.now() - timedelta(hours=rng.uniform(1, 48))
    params = ProlificParams(
        secrets.token_hex(12), study.prolific_study_id or secrets.token_hex(12), secrets.token_hex(12)
    )
    participant = enter_study(study=study, params=params)
    # Simulated judges took the survey in the past: their timestamps say so, for honest medians.
    Participant.objects.filter(pk=participant.pk).update(started_at=clock)
    participant = record_consent(participant=participant, consent=True, anonymised=True)
    participant = record_demographics(participant=participant, demographics=_demographics(rng), now=clock)
    attentive = model.inattentive == 0 or rng.random() >= model.inattentive  # no draw when none are
    step = current_step(participant)
    while step.name == "pair":
        assignment = step.assignment
        assert assignment is not None  # a pair step always has its pair
        mark_shown(assignment=assignment, now=clock)
        clock += timedelta(seconds=rng.uniform(60, 240))
        first, second = assignment.first_answer, assignment.second_answer
        picks = {
            q.key: _pick(model.chance_first(question=q.key, first=first, second=second, attentive=attentive), rng)
            for q in questions
        }
        record_page(participant=participant, assignment=assignment, picks=picks, questions=questions, now=clock)
        step = current_step(participant)
    if step.name == "attention":
        participant = finish_participant(participant=participant, attention_choice=CORRECT_ATTENTION_CHOICE, now=clock)
    return participant, attentive


def _pick(chance_first: float, rng: random.Random) -> str:
    return "first" if rng.random() < chance_first else "second"


def _demographics(rng: random.Random) -> dict:
    return {
        "gender": rng.choice(constants.GENDERS),
        "age": rng.choice(constants.AGE_GROUPS),
        "religion": rng.choice(constants.RELIGIONS),
        "education": rng.choice(constants.EDUCATION_LEVELS),
        "country": rng.choice(constants.COUNTRIES),
    }
