"""The Prolific parameters of a study link, checked once for both surveys (judging and answering)."""

import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings
from django.utils.translation import gettext

from .errors import InvalidProlificLink

# Prolific's ids (participant, study, submission) are 24 hexadecimal characters.
PROLIFIC_ID = re.compile(r"^[0-9a-fA-F]{24}$")
PROLIFIC_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


@dataclass(frozen=True)
class ProlificParams:
    pid: str
    study_id: str
    session_id: str


def parse_prolific_params(params: Mapping) -> ProlificParams:
    """PROLIFIC_PID, STUDY_ID and SESSION_ID from the link, each a 24-character hex id.

    Raises InvalidProlificLink with one message per parameter that is missing or malformed.
    """
    errors = []
    values = {}
    for name in PROLIFIC_PARAMS:
        value = (params.get(name) or "").strip()
        if not value:
            errors.append(gettext("{name} is missing from the link.").format(name=name))
        elif not PROLIFIC_ID.match(value):
            errors.append(gettext("{name} is not a Prolific id (24 letters and digits).").format(name=name))
        values[name] = value
    if errors:
        raise InvalidProlificLink(errors)
    return ProlificParams(pid=values["PROLIFIC_PID"], study_id=values["STUDY_ID"], session_id=values["SESSION_ID"])


def lab_visitor_params() -> ProlificParams:
    """Fresh ids for someone opening a lab study's link (no Prolific): each opening is a new participant."""
    return ProlificParams(pid=secrets.token_hex(12), study_id="", session_id=secrets.token_hex(12))


def prolific_return_url(code: str) -> str:
    """Where Prolific takes a completion code (settings.PROLIFIC_COMPLETION_URL?cc=CODE); "" without a code."""
    return f"{settings.PROLIFIC_COMPLETION_URL}?{urlencode({'cc': code})}" if code else ""
