"""The entry rate limit: how many new survey entries one client address may make (ENTRY_RATE_LIMIT).

One client inventing Prolific ids could otherwise fill a live study's places in seconds. Only new
entries count (a participant resuming is not charged), and they are counted in the database, so every
web process sees the same count, with or without Redis (see EntryAttempt).
"""

import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from ..models import EntryAttempt
from .errors import EntryRateLimited

LIMIT = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smh])\s*$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}

TOO_MANY = gettext_noop(
    "Too many people have started this study from your internet connection in the last few minutes. "
    "If you are taking part through Prolific, please wait {minutes} minutes and open the study link again "
    "(your place on Prolific is kept), or contact the researchers through Prolific."
)


@dataclass(frozen=True)
class Limit:
    entries: int
    window: timedelta

    @property
    def minutes(self) -> int:
        return max(1, round(self.window.total_seconds() / 60))


def entry_limit() -> Limit | None:
    """ENTRY_RATE_LIMIT as a Limit ("3/10m": 3 entries per 10 minutes); None when it is "off"."""
    value = str(settings.ENTRY_RATE_LIMIT).strip().lower()
    if value in ("off", "", "0", "none"):
        return None
    match = LIMIT.match(value)
    if not match:
        raise ImproperlyConfigured(f"ENTRY_RATE_LIMIT must look like 3/10m (or off), not {value!r}.")
    entries, amount, unit = int(match[1]), int(match[2] or 1), match[3]
    return Limit(entries, timedelta(seconds=amount * UNIT_SECONDS[unit]))


def admit_entry(address: str) -> None:
    """Count one new entry from `address`, or raise EntryRateLimited when it would be over the limit.

    The entry is written first and the window counted after, so simultaneous entries all see each
    other (none slips through together); a refused one is taken back, so refusals do not prolong a wait.
    """
    limit = entry_limit()
    if limit is None:
        return
    now = timezone.now()
    since = now - limit.window
    EntryAttempt.objects.filter(at__lt=since).delete()  # forget what no window covers any more
    attempt = EntryAttempt.objects.create(address=address, at=now)
    if EntryAttempt.objects.filter(address=address, at__gte=since).count() > limit.entries:
        attempt.delete()
        raise EntryRateLimited(gettext(TOO_MANY).format(minutes=limit.minutes))
