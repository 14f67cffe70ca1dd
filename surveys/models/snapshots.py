"""What a study's participants see, written once and never changed: the study's snapshot.

Going live writes one (services/snapshots.py): the questions, the vignettes and the selected answers with
their features, each with its translations, as JSON. The judging pages read it through Django's cache,
keyed by the snapshot's id (a UUID: never reused, not even by a fresh test database), so every process
on every host shows the same content and a replaced snapshot is served at once, without a restart.
`Study.snapshot` is the one the study's participants are shown; an operator's data fix writes a new one
(`manage.py replace_snapshot SLUG`), which `replaces` the old. A preview of a draft gets its own.
"""

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from .study import Study


class StudySnapshot(models.Model):
    class Kind(models.TextChoices):
        LIVE = "live", "Live: what judges and writers see"
        PREVIEW = "preview", "Preview of a draft (nothing it records counts)"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="snapshots")
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.LIVE)
    # {"language", "questions": [...], "vignettes": [...], "answers": [...]}; the shape is services/snapshots.py's.
    content = models.JSONField()
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    replaces = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["study_id", "created_at"]

    def __str__(self) -> str:
        return f"{self.study_id}: {self.kind} snapshot of {self.created_at:%Y-%m-%d %H:%M}"
