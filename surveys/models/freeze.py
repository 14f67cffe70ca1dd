"""Live means frozen, below the admin: what judges see of a live study cannot be saved or deleted.

The admin, the study-file import and the services already refuse such edits (services/freezing.py); this
guard holds for every other writer too (a shell, a script, a new code path). Once a study leaves draft its
questions and vignettes, its selected answers and those answers' features refuse `save()`, `delete()` and
their querysets' `update()`, `delete()` and `bulk_create()` with `StudyFrozen`. Fields that judges never
see (an answer's authenticity rating, say) stay writable by naming them in `update_fields`.

A data fix on a live study (a typo judges must not keep seeing) is an operator's decision: it is made
inside `freeze_lifted()` and followed by `manage.py replace_snapshot SLUG`, which the audit trail records.
"""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from .study import Study

_lifted = threading.local()


class StudyFrozen(ValidationError):
    """A change to what a live (or closed) study's judges see or how its cells fill."""


def frozen_message(what: str) -> str:
    return (
        f"{what} belongs to a study that has gone live: what its judges see is frozen, so that it cannot shift "
        "under them. Copy the study as a new draft to change it; for a data fix on the live study, see "
        "`manage.py replace_snapshot` in the README."
    )


@contextmanager
def freeze_lifted() -> Iterator[None]:
    """Let this thread change a live study's content (a data fix, followed by replace_snapshot)."""
    before = getattr(_lifted, "on", False)
    _lifted.on = True
    try:
        yield
    finally:
        _lifted.on = before


def freeze_is_lifted() -> bool:
    return getattr(_lifted, "on", False)


class FrozenContentQuerySet(models.QuerySet):
    """Bulk writes refuse rows of a live study's content as `save()` does."""

    def _refuse_frozen(self, fields=None) -> None:
        model = self.model
        if freeze_is_lifted() or (fields is not None and not set(fields) - model.WRITABLE_WHEN_LIVE):
            return
        if self.filter(model.frozen_rows()).exists():
            raise StudyFrozen(frozen_message(f"One of these {model._meta.verbose_name_plural}"))

    def update(self, **kwargs):
        self._refuse_frozen(kwargs)
        return super().update(**kwargs)

    update.queryset_only = True  # type: ignore[attr-defined]

    def delete(self):
        self._refuse_frozen()
        return super().delete()

    delete.queryset_only = True  # type: ignore[attr-defined]

    def bulk_create(self, objs, *args, **kwargs):
        objs = list(objs)
        if not freeze_is_lifted():
            for obj in objs:
                obj.refuse_if_frozen()
        return super().bulk_create(objs, *args, **kwargs)


class FrozenWithStudy(models.Model):
    """A row of a study's content that freezes when its study goes live (see the module's note)."""

    # The path from the row to its study, and the condition that the row is one judges see.
    STUDY_PATH: ClassVar[str] = "study"
    SHOWN: ClassVar[Q] = Q()
    WRITABLE_WHEN_LIVE: ClassVar[frozenset[str]] = frozenset()

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        self.refuse_if_frozen(kwargs.get("update_fields"))
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        frozen = not freeze_is_lifted() and self.pk is not None
        if frozen and type(self)._base_manager.filter(self.frozen_rows(), pk=self.pk).exists():
            raise StudyFrozen(frozen_message(f"The {self._meta.verbose_name} '{self}'"))
        return super().delete(*args, **kwargs)

    def shown_in_live_study(self) -> bool:
        """Whether the row as it is in memory would be shown by a live study (one query)."""
        raise NotImplementedError

    def refuse_if_frozen(self, update_fields=None) -> None:
        if freeze_is_lifted():
            return
        if update_fields is not None and not set(update_fields) - self.WRITABLE_WHEN_LIVE:
            return
        was_frozen = self.pk is not None and type(self)._base_manager.filter(self.frozen_rows(), pk=self.pk).exists()
        if was_frozen or self.shown_in_live_study():
            raise StudyFrozen(frozen_message(f"The {self._meta.verbose_name} '{self}'"))

    @classmethod
    def frozen_rows(cls) -> Q:
        return ~Q(**{f"{cls.STUDY_PATH}__status": Study.Status.DRAFT}) & cls.SHOWN
