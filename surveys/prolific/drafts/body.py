"""The draft's body: the payload of POST/PATCH studies/ built from the design, with what the researcher
should know first (places, reward, minutes, completion codes and their actions, who may take part, the cost)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal

from ...models import Cell, Study
from ...services import duration
from ...services.judging import median_seconds
from ...services.lifecycle import missing_for_live
from ...services.researcher_tries import PROLIFIC_PLACEHOLDERS
from .. import client, eligibility
from .pay import Cost, cost_of, hourly_rate_of, money, rate_warnings, reward_for, with_margin

PLACEHOLDERS = PROLIFIC_PLACEHOLDERS
DEVICES = ["desktop", "tablet", "mobile"]  # the participant pages work on each (tested in Chromium)

# Prolific's completion-code actions. There is no automatic rejection: a rejection goes through
# 'Review submissions on Prolific', which applies Prolific's rules participant by participant.
APPROVE, REVIEW, RETURN = "AUTOMATICALLY_APPROVE", "MANUALLY_REVIEW", "REQUEST_RETURN"
RETURN_REASONS = {
    "failed_attention_code": "You did not pass the attention check.",
    "no_consent_code": "You did not consent to take part.",
    "screened_out_code": "The study was full when you arrived.",
}


@dataclass(frozen=True)
class Places:
    cells: int
    repetitions: int
    per_judge: int  # vignettes each judge sees: one cell on each
    margin_percent: int
    judges: int  # cells × repetitions ÷ vignettes per judge, rounded up
    total: int  # with the over-recruitment margin, rounded up

    def __str__(self) -> str:
        return (
            f"{self.total} ({self.cells} cells × {self.repetitions} repetitions ÷ {self.per_judge} vignettes per "
            f"judge = {self.judges} judges, + {self.margin_percent}% margin)"
        )


@dataclass(frozen=True)
class Draft:
    payload: dict
    places: Places
    minutes: int
    minutes_from: str
    currency: str
    reward: int  # pence or cents
    hourly_rate: Decimal  # what the reward pays per hour at the estimated minutes
    warnings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # each stops the draft from being sent
    eligibility: list[str] = field(default_factory=list)  # the filters in words

    @property
    def reward_text(self) -> str:
        return money(self.reward, self.currency)

    @property
    def cost(self) -> Cost:
        """Every place filled and paid: the most publishing this draft can cost."""
        return cost_of(self.reward * self.places.total, self.currency)


def planned_cells(study: Study) -> int:
    """The study's cells: counted once it is live (lifecycle.build_comparison_plan made them), before that
    the design's: one per pair of systems on each vignette (each system has one selected answer)."""
    if study.status != Study.Status.DRAFT:
        return Cell.objects.filter(study=study).count()
    return math.comb(study.systems.count(), 2) * study.vignettes.count()


def planned_places(study: Study) -> Places:
    cells = planned_cells(study)
    k = study.vignettes_per_participant
    judges = math.ceil(cells * study.repetitions / k)
    return Places(
        cells=cells,
        repetitions=study.repetitions,
        per_judge=k,
        margin_percent=study.prolific_margin_percent,
        judges=judges,
        total=with_margin(judges, study.prolific_margin_percent),
    )


def code_actions(study: Study) -> list[dict]:
    """One completion code per outcome the judging survey ends with, each with the action Prolific takes.

    Completed (valid or not: the flags are ours) is approved only under the 'approve anyway' policy, else
    left for 'Review submissions on Prolific'. A failed attention check follows the policy: approved, asked
    to return, or reviewed (a rejection must meet Prolific's rules, which the review applies). No consent
    and study full / screened out are asked to return, never rejected.
    """
    policy = Study.InvalidPolicy
    completed = APPROVE if study.invalid_policy == policy.APPROVE else REVIEW
    by_policy: dict[str, str] = {policy.APPROVE: APPROVE, policy.ASK_RETURN: RETURN}
    failed = by_policy.get(study.invalid_policy, REVIEW)
    outcomes = [
        ("completion_code", "COMPLETED", completed),
        ("failed_attention_code", "FAILED_ATTENTION_CHECK", failed),
        ("no_consent_code", "NO_CONSENT", RETURN),
        # Prolific's FIXED_SCREENOUT type needs its screen-out payment set up; OTHER with a return request does not.
        ("screened_out_code", "OTHER", RETURN),
    ]
    codes = []
    for field_name, code_type, action in outcomes:
        code = getattr(study, field_name)
        if not code:
            continue
        step = {"action": action}
        if action == RETURN:
            step["return_reason"] = RETURN_REASONS[field_name]
        codes.append({"code": code, "code_type": code_type, "actions": [step]})
    return codes


def code_problems(study: Study) -> tuple[list[str], list[str]]:
    """(problems, warnings) about the codes: Prolific needs a completion code, each code once."""
    problems, warnings = [], []
    if not study.completion_code:
        problems.append("the study has no completion code (Quality and Prolific policy → Completion code)")
    names = {
        "failed_attention_code": "failed attention check",
        "no_consent_code": "no consent",
        "screened_out_code": "screened out / study full",
    }
    for field_name, outcome in names.items():
        if not getattr(study, field_name):
            warnings.append(f"no '{outcome}' code: those participants get no code to give Prolific")
    codes = [c for c in (getattr(study, name) for name in ["completion_code", *names]) if c]
    if len(codes) != len(set(codes)):
        problems.append("two outcomes share a completion code; Prolific needs each code once")
    return problems, warnings


def build_draft(*, study: Study, study_url: str) -> Draft:
    """The Prolific study as MoralJudge would send it, with what the researcher should know first."""
    places = planned_places(study)
    minutes = duration.estimated_minutes(study)
    minutes_from = "the design" if median_seconds(study=study) is None else "the median time of finished judges"
    reward = reward_for(hourly_rate=study.prolific_hourly_rate, minutes=minutes)
    hourly_rate = hourly_rate_of(reward=reward, minutes=minutes)
    problems, warnings = code_problems(study)
    if places.total < 1:
        problems.append("the design has no cells yet (two systems and a vignette at least): no places to offer")
    if study.status == Study.Status.DRAFT:
        warnings += [f"not ready to go live here: {problem}" for problem in missing_for_live(study)]
    if not study.description.strip():
        warnings.append("no description: Prolific shows participants the study's name only")
    if study_url.startswith("http://"):
        warnings.append(
            "the study link is plain HTTP: behind an HTTPS proxy set SECURE_PROXY_SSL_HEADER (README, Configuration)"
        )
    warnings += rate_warnings(currency=study.prolific_currency, hourly_rate=hourly_rate)
    filters = eligibility.prolific_filters(
        study, client.list_filters() if eligibility.needs_filter_list(study) else None
    )
    problems += filters.problems
    payload = {
        "name": study.name,
        "internal_name": f"{study.name} (MoralJudge: {study.slug})",
        "description": study.description.strip() or study.name,
        "external_study_url": f"{study_url}?{PLACEHOLDERS}",
        "prolific_id_option": "url_parameters",
        "completion_codes": code_actions(study),
        "estimated_completion_time": minutes,
        "reward": reward,
        "total_available_places": places.total,
        "device_compatibility": DEVICES,
        "filters": filters.filters,  # [] lets anyone on Prolific in, and clears the filters of an earlier draft
    }
    return Draft(
        payload=payload,
        places=places,
        minutes=minutes,
        minutes_from=minutes_from,
        currency=study.prolific_currency,
        reward=reward,
        hourly_rate=hourly_rate,
        warnings=warnings,
        problems=problems,
        eligibility=filters.said,
    )
