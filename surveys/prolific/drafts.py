"""Prolific from the admin: the study's Prolific study, built from the design, created or updated as a
draft, published, and given more places when returns and exclusions leave cells open.

- `build_draft`: the payload of POST/PATCH studies/ (Prolific's study object): name, description, the
  judging link with Prolific's {{%PROLIFIC_PID%}}, {{%STUDY_ID%}} and {{%SESSION_ID%}} placeholders,
  one completion code per outcome with its action (`code_actions`), the estimated minutes
  (services/duration.py: the design's, then the finished judges' median), the places (`planned_places`:
  cells × repetitions ÷ vignettes per judge, plus the study's margin) and the reward (the study's hourly
  rate × minutes ÷ 60, in pence or cents), with warnings below Prolific's minimum and recommended rates.
- `send_draft`: POST when the study has no Prolific id, PATCH while the Prolific study is a draft;
  once published Prolific changes only its places, and this says so.
- `publish`: the PUBLISH transition, once the study is live here.
- `places_needed` / `add_places`: how many judges the open cells still need, against the places
  Prolific has left, and the PATCH of total_available_places that adds the difference.

The Prolific id is stored on the study (prolific_study_id): reconciliation, verification and review
use it from then on. Nothing is stored unless Prolific said yes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Sum
from django.db.models.functions import Greatest
from django.utils import timezone

from ..models import Cell, Study
from ..services import duration
from ..services.judging import median_seconds
from ..services.lifecycle import missing_for_live
from . import client
from .client import ProlificError

UNPUBLISHED = "UNPUBLISHED"  # Prolific's status of a draft
PLACEHOLDERS = "PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
DEVICES = ["desktop", "tablet", "mobile"]  # the participant pages work on each (tested in Chromium)
CURRENCY_SYMBOLS = {"GBP": "£", "USD": "$"}

# Prolific's completion-code actions. There is no automatic rejection: a rejection goes through
# 'Review submissions on Prolific', which applies Prolific's rules participant by participant.
APPROVE, REVIEW, RETURN = "AUTOMATICALLY_APPROVE", "MANUALLY_REVIEW", "REQUEST_RETURN"
RETURN_REASONS = {
    "failed_attention_code": "You did not pass the attention check.",
    "no_consent_code": "You did not consent to take part.",
    "screened_out_code": "The study was full when you arrived.",
}


class NotADraft(ProlificError):
    """The Prolific study is published (or beyond): only its places can change."""


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

    @property
    def reward_text(self) -> str:
        return money(self.reward, self.currency)


def money(minor: int, currency: str) -> str:
    return f"{CURRENCY_SYMBOLS.get(currency, currency + ' ')}{Decimal(minor) / 100:.2f}"


def planned_cells(study: Study) -> int:
    """The study's cells: counted once it is live (lifecycle.build_comparison_plan made them), before that
    the design's: one per pair of systems on each vignette (each system has one selected answer)."""
    if study.status != Study.Status.DRAFT:
        return Cell.objects.filter(study=study).count()
    return math.comb(study.systems.count(), 2) * study.vignettes.count()


def with_margin(judges: int, margin_percent: int) -> int:
    return math.ceil(judges * (100 + margin_percent) / 100)


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


def reward_for(*, hourly_rate: Decimal, minutes: int) -> int:
    """Pence or cents for `minutes` at `hourly_rate`, rounded up: never below the rate the researcher set."""
    return int((hourly_rate * 100 * minutes / 60).to_integral_value(rounding=ROUND_CEILING))


def hourly_rate_of(*, reward: int, minutes: int) -> Decimal:
    return (Decimal(reward) * 60 / minutes / 100).quantize(Decimal("0.01"))


def rate_warnings(*, currency: str, hourly_rate: Decimal) -> list[str]:
    rates = settings.PROLIFIC_HOURLY_RATES.get(currency)
    if rates is None:
        return [f"no Prolific minimum is known for {currency} (settings.PROLIFIC_HOURLY_RATES)"]
    symbol = CURRENCY_SYMBOLS.get(currency, currency + " ")
    if hourly_rate < rates["minimum"]:
        return [
            f"the reward pays {symbol}{hourly_rate} per hour, below Prolific's minimum of "
            f"{symbol}{rates['minimum']}: Prolific will refuse the study"
        ]
    if hourly_rate < rates["recommended"]:
        return [
            f"the reward pays {symbol}{hourly_rate} per hour, below Prolific's recommended {symbol}{rates['recommended']}"
        ]
    return []


def code_actions(study: Study) -> list[dict]:
    """One completion code per outcome the judging survey ends with, each with the action Prolific takes.

    Completed (valid or not: the flags are ours) is approved only under the 'approve anyway' policy, else
    left for 'Review submissions on Prolific'. A failed attention check follows the policy: approved, asked
    to return, or reviewed (a rejection must meet Prolific's rules, which the review applies). No consent
    and study full / screened out are asked to return, never rejected.
    """
    policy = Study.InvalidPolicy
    completed = APPROVE if study.invalid_policy == policy.APPROVE else REVIEW
    failed = {policy.APPROVE: APPROVE, policy.ASK_RETURN: RETURN}.get(study.invalid_policy, REVIEW)
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
    )


@dataclass(frozen=True)
class Sent:
    prolific_id: str
    created: bool
    status: str
    draft: Draft


def send_draft(*, study: Study, study_url: str) -> Sent:
    """Create the Prolific draft (POST) or update it (PATCH); store its id and status once Prolific agrees.

    The study's row is locked for the call, so two clicks cannot create two Prolific studies.
    """
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        draft = build_draft(study=study, study_url=study_url)
        if draft.problems:
            raise ValidationError(f"Study '{study.slug}' was not sent to Prolific: " + "; ".join(draft.problems) + ".")
        if study.prolific_study_id:
            _require_draft(study.prolific_study_id, client.get_study(study.prolific_study_id))
            remote = client.update_study(study.prolific_study_id, draft.payload)
            prolific_id, created = study.prolific_study_id, False
        else:
            remote = _create(draft.payload)
            prolific_id, created = str(remote.get("id") or ""), True
            if not prolific_id:
                raise ProlificError(f"Prolific created the study but its answer has no id: {str(remote)[:200]}")
        status = str(remote.get("status") or UNPUBLISHED)
        # The minutes advertised are the ones the review's rules read (one failed check rejectable under 5).
        _remember(study, prolific_study_id=prolific_id, prolific_status=status, estimated_minutes=draft.minutes)
    return Sent(prolific_id=prolific_id, created=created, status=status, draft=draft)


def preview_draft(*, study: Study, study_url: str) -> Draft:
    """build_draft, plus a problem when the study's Prolific study is no longer a draft (one GET)."""
    draft = build_draft(study=study, study_url=study_url)
    if study.prolific_study_id:
        try:
            _require_draft(study.prolific_study_id, client.get_study(study.prolific_study_id))
        except NotADraft as exc:
            draft.problems.append(str(exc).rstrip("."))
    return draft


@dataclass(frozen=True)
class OnProlific:
    """A Prolific study as Prolific holds it, for the publish page."""

    prolific_id: str
    status: str
    places: int
    minutes: int
    reward: int
    currency: str
    codes: list
    warnings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def hourly_rate(self) -> Decimal | None:
        return hourly_rate_of(reward=self.reward, minutes=self.minutes) if self.minutes else None


def preview_publish(*, study: Study, study_url: str) -> OnProlific:
    """What publishing would put in front of participants, and what stands in the way (one GET)."""
    if not study.prolific_study_id:
        raise ValidationError(f"Study '{study.slug}' has no Prolific study yet: create the draft first.")
    remote = client.get_study(study.prolific_study_id)
    held = OnProlific(
        prolific_id=study.prolific_study_id,
        status=str(remote.get("status") or ""),
        places=int(remote.get("total_available_places") or 0),
        minutes=int(remote.get("estimated_completion_time") or 0),
        reward=int(remote.get("reward") or 0),
        currency=study.prolific_currency,
        codes=remote.get("completion_codes") or [],
    )
    if held.status != UNPUBLISHED:
        held.problems.append(f"the Prolific study is {held.status}, not a draft")
    if study.status != Study.Status.LIVE:
        held.problems.append(f"the study is {study.status} here: go live first")
    if held.hourly_rate is not None:
        held.warnings.extend(rate_warnings(currency=held.currency, hourly_rate=held.hourly_rate))
    now = build_draft(study=study, study_url=study_url)
    changed = [
        f"{name} {theirs} on Prolific, {ours} now"
        for name, theirs, ours in [
            ("places", held.places, now.places.total),
            ("minutes", held.minutes, now.minutes),
            ("reward", money(held.reward, held.currency), now.reward_text),
        ]
        if theirs != ours
    ]
    if changed:
        held.warnings.append(
            "the draft on Prolific differs from the study now (" + "; ".join(changed) + "): run "
            "'Create or update Prolific draft' first to send the new figures"
        )
    return held


def _create(payload: dict) -> dict:
    try:
        return client.create_study(payload)
    except client.Retryable as exc:
        # A timeout or a 5xx may come after Prolific made the study: trying blindly could make a second one.
        raise client.Retryable(
            f"{exc} Prolific may have created the draft all the same: look for '{payload['internal_name']}' "
            "among your studies on Prolific before trying again.",
            status_code=exc.status_code,
            body=exc.body,
        ) from exc


def _require_draft(prolific_id: str, remote: dict) -> None:
    status = remote.get("status")
    if status != UNPUBLISHED:
        raise NotADraft(
            f"The Prolific study {prolific_id} is {status}, no longer a draft: Prolific lets only its places "
            "change now (action 'Add places on Prolific')."
        )


def _remember(study: Study, **fields) -> None:
    Study.objects.filter(pk=study.pk).update(prolific_synced_at=timezone.now(), **fields)


def publish(*, study: Study) -> str:
    """Publish the Prolific draft: only for a study that is live here, so the link leads to open pages."""
    if not study.prolific_study_id:
        raise ValidationError(f"Study '{study.slug}' has no Prolific study yet: create the draft first.")
    if study.status != Study.Status.LIVE:
        raise ValidationError(
            f"Study '{study.slug}' is {study.status} here: go live first, or Prolific's participants would "
            "find the survey closed."
        )
    _require_draft(study.prolific_study_id, client.get_study(study.prolific_study_id))
    remote = client.publish_study(study.prolific_study_id)
    status = str(remote.get("status") or "PUBLISHING")
    _remember(study, prolific_status=status)
    return status


@dataclass(frozen=True)
class PlacesNeeded:
    open_places: int  # judgments the cells still want, beyond those completed or reserved
    vignettes_open: int  # vignettes with a cell that has room
    per_judge: int
    margin_percent: int
    judges: int  # open places ÷ vignettes per judge, rounded up, + margin
    prolific_total: int
    prolific_taken: int
    to_add: int
    warnings: list[str] = field(default_factory=list)

    @property
    def prolific_left(self) -> int:
        return max(0, self.prolific_total - self.prolific_taken)


def open_places(study: Study) -> tuple[int, int]:
    """(judgments the cells still want, vignettes with room): what returns and exclusions left open."""
    room = Greatest(F("target") - F("completed") - F("reserved"), 0)
    cells = Cell.objects.filter(study=study).order_by()
    wanted = cells.aggregate(total=Sum(room))["total"] or 0
    vignettes = cells.filter(completed__lt=F("target") - F("reserved")).values("vignette_id").distinct().count()
    return wanted, vignettes


def places_needed(*, study: Study, remote: dict | None = None) -> PlacesNeeded:
    """How many places to add on Prolific: judges for the open cells, less the places Prolific has left."""
    if not study.prolific_study_id:
        raise ValidationError(f"Study '{study.slug}' has no Prolific study yet: create the draft first.")
    if study.status == Study.Status.DRAFT:
        raise ValidationError(f"Study '{study.slug}' is a draft here: it has no cells to fill yet.")
    remote = remote if remote is not None else client.get_study(study.prolific_study_id)
    if remote.get("status") == UNPUBLISHED:
        raise ValidationError(
            f"The Prolific study {study.prolific_study_id} is still a draft: change its places with "
            "'Create or update Prolific draft'."
        )
    wanted, vignettes = open_places(study)
    k = study.vignettes_per_participant
    judges = with_margin(math.ceil(wanted / k), study.prolific_margin_percent) if wanted else 0
    total = int(remote.get("total_available_places") or 0)
    taken = int(remote.get("places_taken") or 0)
    warnings = []
    if wanted and vignettes < k:
        warnings.append(
            f"only {vignettes} vignettes have open cells and each judge needs {k}: new judges cannot be given "
            "work until more open up (or the study is closed and copied)"
        )
    return PlacesNeeded(
        open_places=wanted,
        vignettes_open=vignettes,
        per_judge=k,
        margin_percent=study.prolific_margin_percent,
        judges=judges,
        prolific_total=total,
        prolific_taken=taken,
        to_add=max(0, judges - max(0, total - taken)),
        warnings=warnings,
    )


def add_places(*, study: Study) -> PlacesNeeded:
    """PATCH total_available_places up by what the open cells need; ValidationError when none are needed."""
    needed = places_needed(study=study)
    if needed.to_add == 0:
        raise ValidationError(
            f"Study '{study.slug}' needs no more places on Prolific: {needed.open_places} open places in the cells, "
            f"{needed.prolific_left} places left on Prolific."
        )
    remote = client.update_study(
        study.prolific_study_id, {"total_available_places": needed.prolific_total + needed.to_add}
    )
    _remember(study, prolific_status=str(remote.get("status") or study.prolific_status))
    return needed
