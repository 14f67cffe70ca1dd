"""Who may take the study on Prolific: the study's eligibility, set in the admin and sent as the draft's `filters`.

A study's `prolific_eligibility` is a small JSON object with these keys (all optional, `clean_eligibility` checks):

- minimum_approval_rate: 0-100, Prolific's `approval_rate` range filter (lower bound; upper 100).
- countries: names of countries of residence as Prolific lists them ("United Kingdom"), the
  `current-country-of-residence` select filter.
- fluent_languages: language names ("English"), the `fluent-languages` select filter.
- exclude_team_studies: true to keep out everyone who took part in another study of this study's team on
  Prolific, so that a second experiment gets fresh judges (`previous_studies_blocklist`).
- excluded_studies: further Prolific study ids whose participants are kept out (the same filter).

Prolific's select filters take its own choice ids, not names, and those ids are Prolific's to change: the names
are looked up in its filter list (GET filters/, `client.list_filters`) when the draft is built, and a name not in
it stops the draft with the names that are (Prolific's API docs, "Filters": select filters take
`selected_values`, range filters `selected_range` {lower, upper}).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from ..models import Study, StudyMembership

KEYS = ("minimum_approval_rate", "countries", "fluent_languages", "exclude_team_studies", "excluded_studies")
APPROVAL_RATE = "approval_rate"
COUNTRY = "current-country-of-residence"
FLUENT_LANGUAGES = "fluent-languages"
PREVIOUS_STUDIES = "previous_studies_blocklist"
PROLIFIC_ID = re.compile(r"^[0-9a-f]{24}$")
ACTING = (StudyMembership.Role.OWNER, StudyMembership.Role.RESEARCHER)


def clean_eligibility(value: object) -> dict:
    """The eligibility object with its lists trimmed and deduplicated; ValidationError naming what is wrong."""
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        raise ValidationError("Prolific eligibility must be a JSON object.")
    unknown = sorted(set(value) - set(KEYS))
    if unknown:
        raise ValidationError(f"Unknown eligibility keys: {', '.join(unknown)} (known: {', '.join(KEYS)}).")
    cleaned: dict = {}
    rate = value.get("minimum_approval_rate")
    if rate not in (None, ""):
        if isinstance(rate, bool) or not isinstance(rate, int) or not 0 <= rate <= 100:
            raise ValidationError("The minimum approval rate is a whole number from 0 to 100.")
        cleaned["minimum_approval_rate"] = rate
    for key in ("countries", "fluent_languages", "excluded_studies"):
        names = _names(value.get(key), key)
        if names:
            cleaned[key] = names
    bad = [i for i in cleaned.get("excluded_studies", []) if not PROLIFIC_ID.match(i)]
    if bad:
        raise ValidationError(f"Not Prolific study ids (24 hexadecimal characters): {', '.join(bad)}.")
    exclude = value.get("exclude_team_studies", False)
    if not isinstance(exclude, bool):
        raise ValidationError("exclude_team_studies is true or false.")
    if exclude:
        cleaned["exclude_team_studies"] = True
    return cleaned


def _names(value: object, key: str) -> list[str]:
    if value in (None, ""):
        return []
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValidationError(f"{key} is a list of names.")
    return list(dict.fromkeys(v.strip() for v in value if v.strip()))


def team_studies(study: Study) -> list[Study]:
    """The other studies on Prolific of this study's owners and researchers (any of them), oldest first."""
    team = StudyMembership.objects.filter(study=study, role__in=ACTING).values("user_id")
    shared = StudyMembership.objects.filter(user_id__in=team, role__in=ACTING).values("study_id")
    return list(
        Study.objects.filter(pk__in=shared).exclude(pk=study.pk).exclude(prolific_study_id="").order_by("created_at")
    )


def excluded_study_ids(study: Study) -> list[str]:
    eligibility = clean_eligibility(study.prolific_eligibility)
    ids = [s.prolific_study_id for s in team_studies(study)] if eligibility.get("exclude_team_studies") else []
    ids += eligibility.get("excluded_studies", [])
    return [i for i in dict.fromkeys(ids) if i != study.prolific_study_id]


def needs_filter_list(study: Study) -> bool:
    """Whether Prolific's filter list must be read to build the filters (names to its choice ids)."""
    eligibility = clean_eligibility(study.prolific_eligibility)
    return bool(eligibility.get("countries") or eligibility.get("fluent_languages"))


@dataclass
class Filters:
    filters: list[dict] = field(default_factory=list)  # the draft's `filters`
    said: list[str] = field(default_factory=list)  # each filter in words, for the confirmation page
    problems: list[str] = field(default_factory=list)  # each stops the draft


def prolific_filters(study: Study, filter_list: list[dict] | None = None) -> Filters:
    """The study's eligibility as Prolific's `filters`; `filter_list` is GET filters/ (needed for names)."""
    eligibility = clean_eligibility(study.prolific_eligibility)
    out = Filters()
    rate = eligibility.get("minimum_approval_rate")
    if rate is not None:
        out.filters.append({"filter_id": APPROVAL_RATE, "selected_range": {"lower": rate, "upper": 100}})
        out.said.append(f"approval rate at least {rate}%")
    by_id = {f.get("filter_id"): f for f in filter_list or []}
    for key, filter_id, what in (
        ("countries", COUNTRY, "living in"),
        ("fluent_languages", FLUENT_LANGUAGES, "fluent in"),
    ):
        names = eligibility.get(key)
        if not names:
            continue
        choices = (by_id.get(filter_id) or {}).get("choices") or {}
        if not choices:
            out.problems.append(f"Prolific's filter list has no '{filter_id}' filter to say who is {what}")
            continue
        ids_by_name = {str(label).casefold(): str(choice) for choice, label in choices.items()}
        unknown = [n for n in names if n.casefold() not in ids_by_name]
        if unknown:
            some = ", ".join(sorted(str(label) for label in choices.values())[:8])
            out.problems.append(
                f"not in Prolific's list for '{what}': {', '.join(unknown)} (Prolific's names, e.g. {some})"
            )
            continue
        out.filters.append({"filter_id": filter_id, "selected_values": [ids_by_name[n.casefold()] for n in names]})
        out.said.append(f"{what} {', '.join(names)}")
    excluded = excluded_study_ids(study)
    if excluded:
        out.filters.append({"filter_id": PREVIOUS_STUDIES, "selected_values": excluded})
        out.said.append(
            f"not in {len(excluded)} earlier {'study' if len(excluded) == 1 else 'studies'} ({', '.join(excluded)})"
        )
    elif eligibility.get("exclude_team_studies"):
        out.said.append("not in the team's other studies (none on Prolific yet)")
    if not out.said:
        out.said.append("anyone on Prolific (no filters)")
    return out
