"""Survey entries per client address, for the entry rate limit (surveys/services/entry_limit.py)."""

from django.db import models
from django.utils import timezone


class EntryAttempt(models.Model):
    """One new entry into a survey from a client address; rows older than the limit's window are deleted.

    In the database (not a per-process cache) so every web process on every host counts the same
    entries, on SQLite as on PostgreSQL, with or without Redis.
    """

    address = models.CharField(max_length=64)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["address", "at"], name="entry_attempt_address_idx")]

    def __str__(self) -> str:
        return f"{self.address} at {self.at:%H:%M:%S}"
