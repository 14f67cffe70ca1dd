"""Answers and their features: editable while the study is a draft, frozen once judges have seen them."""

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError

from ..answers import FeatureIn, feature_errors
from ..models import Answer, Feature, Study


class FeatureFormSet(forms.BaseInlineFormSet):
    def clean(self):
        # The features as a whole obey the answer rules (weights sum to 100, at most five): an error on the
        # page, before anything is written, rather than a server error while saving.
        super().clean()
        features = [
            FeatureIn(feature=f.cleaned_data.get("feature") or "", weight=f.cleaned_data.get("weight") or 0)
            for f in self.forms
            if f.cleaned_data and not f.cleaned_data.get("DELETE")
        ]
        errors = feature_errors(features)
        if errors:
            raise ValidationError([error[0].upper() + error[1:] + "." for error in errors])


class FeatureInline(admin.TabularInline):
    model = Feature
    formset = FeatureFormSet
    extra = 0
    fields = ["position", "feature", "weight", "reason"]

    def _frozen(self, answer) -> bool:
        return answer is not None and answer.vignette.study.status != Study.Status.DRAFT

    def has_add_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_delete_permission(request, obj)


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["__str__", "system", "vignette", "sample", "selected", "origin", "selected_by", "selected_at"]
    list_filter = ["vignette__study", "system__kind", "selected", "origin"]
    search_fields = ["action", "system__key", "vignette__key"]
    readonly_fields = ["selected", "selected_by", "selected_at", "created_at"]
    inlines = [FeatureInline]
    list_select_related = ["system", "vignette", "selected_by"]

    def has_change_permission(self, request, obj=None):
        # Once a study has gone live, judges have seen its answers: they stay as they were.
        if obj is not None and obj.vignette.study.status != Study.Status.DRAFT:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if obj is not None and obj.vignette.study.status != Study.Status.DRAFT:
            return False
        return super().has_delete_permission(request, obj)
