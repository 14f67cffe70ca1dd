"""What the surveys' services refuse, as domain errors; the views choose the HTTP status for each.

They are ValidationErrors (house style: a broken rule is a ValidationError), so `.messages` says
why in words a participant can read.
"""

from django.core.exceptions import ValidationError


class EntryRefused(ValidationError):
    """Someone cannot (or can no longer) enter a survey."""


class InvalidProlificLink(EntryRefused):
    """The link's Prolific parameters are missing or not Prolific ids."""


class StudyClosed(EntryRefused):
    """The study no longer takes anyone (gone for good)."""


class NotOffered(EntryRefused):
    """The study does not offer this survey, or the invitation cannot be used."""


class TransitionNotAllowed(ValidationError):
    """No rule of the participant lifecycle covers this event in the participant's status."""


class EntryRateLimited(EntryRefused):
    """Too many new entries from one client address (ENTRY_RATE_LIMIT): try again later."""


class SessionInUse(EntryRefused):
    """The same Prolific participant has another submission of this study in progress."""
