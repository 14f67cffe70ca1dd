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

Modules, one per step: body (the draft's payload, places and codes), pay (reward and hourly-rate maths),
sending (create or update the draft), publishing, places (add places), remote (the draft status, what is
stored). The names below are what the admin and the tests use.

The Prolific id is stored on the study (prolific_study_id): reconciliation, verification and review
use it from then on. Nothing is stored unless Prolific said yes.
"""

from .body import Draft, Places, build_draft, code_actions, code_problems, planned_cells, planned_places
from .pay import Cost, cost_of, hourly_rate_of, money, rate_warnings, reward_for, with_margin
from .places import PlacesNeeded, add_places, open_places, places_needed
from .publishing import OnProlific, preview_publish, publish
from .remote import UNPUBLISHED, NotADraft
from .sending import Sent, preview_draft, send_draft

__all__ = [
    "UNPUBLISHED",
    "Cost",
    "Draft",
    "NotADraft",
    "OnProlific",
    "Places",
    "PlacesNeeded",
    "Sent",
    "add_places",
    "build_draft",
    "code_actions",
    "code_problems",
    "cost_of",
    "hourly_rate_of",
    "money",
    "open_places",
    "places_needed",
    "planned_cells",
    "planned_places",
    "preview_draft",
    "preview_publish",
    "publish",
    "rate_warnings",
    "reward_for",
    "send_draft",
    "with_margin",
]
