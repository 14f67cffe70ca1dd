"""More places on Prolific when returns and exclusions leave cells open: how many, and the PATCH that adds them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db.models import F, Sum
from django.db.models.functions import Greatest

from ...models import AuditEvent, Cell, Study
from ...services.audit import record_event
from .. import client
from ..ownership import owned_prolific_study
from .pay import cost_of, with_margin
from .remote import UNPUBLISHED, remember


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
    reward: int = 0  # per place on Prolific, pence or cents: what each added place may cost
    warnings: list[str] = field(default_factory=list)

    @property
    def prolific_left(self) -> int:
        return max(0, self.prolific_total - self.prolific_taken)


def open_places(study: Study) -> tuple[int, int]:
    """(judgments the cells still want, vignettes with room): what returns and exclusions left open."""
    room = Greatest(F("target") - F("completed") - F("reserved"), 0)
    cells = Cell.objects.filter(study=study).order_by()
    wanted = cells.aggregate(total=Sum(room))["total"] or 0
    vignettes = cells.with_room().values("vignette_id").distinct().count()
    return wanted, vignettes


def places_needed(*, study: Study, remote: dict | None = None) -> PlacesNeeded:
    """How many places to add on Prolific: judges for the open cells, less the places Prolific has left."""
    prolific_id = owned_prolific_study(study)
    if study.status == Study.Status.DRAFT:
        raise ValidationError(f"Study '{study.slug}' is a draft here: it has no cells to fill yet.")
    remote = remote if remote is not None else client.get_study(prolific_id)
    if remote.get("status") == UNPUBLISHED:
        raise ValidationError(
            f"The Prolific study {prolific_id} is still a draft: change its places with "
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
        reward=int(remote.get("reward") or 0),
        warnings=warnings,
    )


def add_places(*, study: Study, by=None) -> PlacesNeeded:
    """PATCH total_available_places up by what the open cells need; ValidationError when none are needed.
    Audited with the places and the reward each may cost."""
    needed = places_needed(study=study)
    if needed.to_add == 0:
        raise ValidationError(
            f"Study '{study.slug}' needs no more places on Prolific: {needed.open_places} open places in the cells, "
            f"{needed.prolific_left} places left on Prolific."
        )
    prolific_id = owned_prolific_study(study)
    total = needed.prolific_total + needed.to_add
    remote = client.update_study(prolific_id, {"total_available_places": total})
    remember(study, prolific_status=str(remote.get("status") or study.prolific_status))
    cost = cost_of(needed.reward * needed.to_add, study.prolific_currency)
    record_event(
        action=AuditEvent.Action.PROLIFIC_PLACES_ADDED,
        user=by,
        study=study,
        prolific_study_id=prolific_id,
        places_before=needed.prolific_total,
        places_added=needed.to_add,
        reward=needed.reward,
        estimated_cost=cost.total,
        currency=study.prolific_currency,
    )
    return needed
