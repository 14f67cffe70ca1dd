"""The entry rate limit: how many new survey entries one client address may make (ENTRY_RATE_LIMIT).

One client inventing Prolific ids could otherwise fill a live study's places in seconds. Only new
entries count (a participant resuming is not charged), and they are counted in the database, so every
web process sees the same count, with or without Redis (see EntryAttempt).
"""

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from moraljudge.env import parse_rate

from ..models import EntryAttempt
from .errors import EntryRateLimited

TOO_MANY = gettext_noop(
    "Too many people have started this study from your internet connection in the last few minutes. "
    "If you are taking part through Prolific, please wait {minutes} minutes and open the study link again "
    "(your place on Prolific is kept), or contact the researchers through Prolific."
)


# Said only to a signed-in member of the study's team (never to a participant): why their own test link was
# refused, and the ways round it.
FOR_THE_TEAM = (
    "You are signed in as a member of this study's team: the entry limit ({entries} new participants per "
    "{minutes} minutes from one internet address, ENTRY_RATE_LIMIT) counts your own visits to the participant "
    "link with Prolific ids in it too, so your test link number {next} was refused. To try the survey as often "
    'as you like, use "Try the survey" on the study\'s page (or open the link without its PROLIFIC_PID): a try '
    "is never counted and never enters the analysis, the cells or Prolific. Otherwise wait {minutes} minutes, "
    "or set ENTRY_RATE_LIMIT=off for a lab session where everyone shares one address."
)


def limit_explained_to_the_team() -> str:
    """FOR_THE_TEAM with this deployment's limit filled in ("" when there is no limit)."""
    limit = entry_limit()
    if limit is None:
        return ""
    return FOR_THE_TEAM.format(entries=limit.entries, minutes=limit.minutes, next=limit.entries + 1)


@dataclass(frozen=True)
class Limit:
    entries: int
    window: timedelta

    @property
    def minutes(self) -> int:
        return max(1, round(self.window.total_seconds() / 60))


def entry_limit() -> Limit | None:
    """ENTRY_RATE_LIMIT as a Limit ("3/10m": 3 entries per 10 minutes); None when it is "off"."""
    try:
        rate = parse_rate(str(settings.ENTRY_RATE_LIMIT))
    except ValueError as error:
        raise ImproperlyConfigured(f"ENTRY_RATE_LIMIT: {error}.") from None
    return None if rate is None else Limit(*rate)


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
