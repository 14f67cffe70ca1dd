"""The study admin's side of "live means frozen" (the rule itself: surveys.services.freezing)."""

from typing import TYPE_CHECKING

from django.contrib import admin
from django.db import models
from django.forms.models import BaseInlineFormSet, inlineformset_factory, modelform_factory

from ..models import Study
from ..services.freezing import FROZEN_STUDY_FIELDS, is_frozen

if TYPE_CHECKING:  # mixed into the study's inlines: the permissions it narrows are the inline's
    _Base = admin.options.InlineModelAdmin
else:
    _Base = object


class FrozenWhenLive(_Base):
    """An inline of a study's parts: read-only once the study has gone live."""

    def has_add_permission(self, request, obj=None):
        return not is_frozen(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return not is_frozen(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not is_frozen(obj) and super().has_delete_permission(request, obj)


def attempted_frozen_edits(request, study: Study, inlines) -> list[str]:
    """What a POST to a frozen study's page tries to change among the frozen fields and parts.

    The page shows them read-only, so Django would ignore them silently; a page opened while the
    study was a draft (or a hand-made request) should be told instead. Only values the POST carries count.
    """
    posted = request.POST
    fields = [name for name in FROZEN_STUDY_FIELDS if name in posted]
    touched = []
    if fields:
        form = modelform_factory(Study, fields=fields)(posted, instance=study)
        touched += [name for name in form.changed_data if name in posted]
    for inline in inlines:
        prefix = inline.model._meta.get_field("study").remote_field.related_name
        if f"{prefix}-TOTAL_FORMS" not in posted:
            continue
        names = _flat(inline.fields)
        formset: BaseInlineFormSet = inlineformset_factory(
            Study, inline.model, fields=names, extra=0, formfield_callback=_formfield
        )(posted, instance=study, prefix=prefix)
        for form in formset.forms:
            sent = [name for name in names if f"{form.prefix}-{name}" in posted]
            deleting = posted.get(f"{form.prefix}-DELETE")
            if deleting or (form.instance.pk is None and sent) or set(form.changed_data) & set(sent):
                touched.append(prefix)
                break
    return touched


def _formfield(db_field, **kwargs):
    if isinstance(db_field, models.URLField):
        kwargs["assume_scheme"] = "https"  # as the inline does (Django 6's default)
    return db_field.formfield(**kwargs)


def _flat(fields) -> list[str]:
    return [name for item in fields for name in (item if isinstance(item, tuple | list) else [item])]
