"""Answers and their features: editable while the study is a draft, frozen once judges have seen them."""

from django import forms
from django.contrib import admin

from ..models import Answer, Feature
from ..services.answer_records import check_same_study
from ..services.answer_shape import validate_features
from ..services.freezing import is_frozen
from ..services.shape_basics import ShapeError, describe, sentence
from .teams import TeamScoped


def _with_study(part) -> str:
    # Every study may have a "Lay human" and a "v1": say whose each one is.
    return f"{part} ({part.study.slug})"


# A broken database rule reaches the form in words naming the field: each constraint's
# violation_error_message (surveys/models), checked by the model form's validate_constraints.
class FeatureForm(forms.ModelForm):  # the inline gives it its model and fields
    def has_changed(self):
        # A row whose position the formset renumbered must be saved even when nothing typed changed.
        return super().has_changed() or (
            self.instance.pk is not None and self.instance.position != self.initial_position
        )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.initial_position = self.instance.position


class FeatureFormSet(forms.BaseInlineFormSet):
    def clean(self):
        # The rows as a whole obey the answer's shape (surveys.services.answer_shape): an error on the page,
        # before anything is written, rather than a server error while saving.
        super().clean()
        kept = [form for form in self.forms if form.cleaned_data and not form.cleaned_data.get("DELETE")]
        for position, form in enumerate(kept, start=1):  # positions fill themselves, 1 to 5 in page order
            form.instance.position = position
        if any(form.errors for form in kept):
            return  # each row's own errors first; its totals mean little yet
        try:
            validate_features(
                [
                    {name: form.cleaned_data.get(name) or "" for name in ("feature", "reason")}
                    | {"weight": form.cleaned_data.get("weight")}
                    for form in kept
                ]
            )
        except ShapeError as error:
            whole = []
            for problem in error.errors():
                if problem["loc"]:
                    index, name = problem["loc"][:2]
                    assert isinstance(index, int)  # a feature's problem: its row first
                    kept[index].add_error(name if name in kept[index].fields else None, sentence(describe(problem)))
                else:
                    whole.append(sentence(describe(problem)))
            if whole:
                raise forms.ValidationError(whole) from None


class FeatureInline(admin.TabularInline):
    model = Feature
    form = FeatureForm
    formset = FeatureFormSet
    extra = 0
    fields = ["position", "feature", "weight", "reason"]
    readonly_fields = ["position"]  # given by the rows' order when saved

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        # Five rows on one screen: a feature's name is a line or two, its reason a few (the page's CSS sets widths).
        rows = {"feature": 2, "reason": 3}
        if db_field.name in rows:
            kwargs["widget"] = forms.Textarea(attrs={"rows": rows[db_field.name], "cols": 30})
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def _frozen(self, answer) -> bool:
        return answer is not None and is_frozen(answer.vignette.study)

    def has_add_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_add_permission(request, obj)

    def has_change_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return not self._frozen(obj) and super().has_delete_permission(request, obj)


class AnswerForm(forms.ModelForm):  # the admin gives it its model and fields
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("system", "vignette"):
            if name in self.fields:
                field = self.fields[name]
                assert isinstance(field, forms.ModelChoiceField)
                assert field.queryset is not None  # a foreign key's field: its model's rows
                field.queryset = field.queryset.select_related("study")
                field.label_from_instance = _with_study  # type: ignore[method-assign, assignment]  # Django's per-field label hook

    def clean(self):
        cleaned = super().clean()
        assert cleaned is not None  # ModelForm.clean returns the cleaned data
        if cleaned.get("system") and cleaned.get("vignette"):
            try:
                check_same_study(system=cleaned["system"], vignette=cleaned["vignette"])
            except forms.ValidationError as error:
                self.add_error("vignette", error)
        return cleaned


@admin.register(Answer)
class AnswerAdmin(TeamScoped, admin.ModelAdmin):
    study_path = "vignette__study"
    form = AnswerForm
    list_display = ["__str__", "system", "vignette", "sample", "selected", "origin", "selected_by", "selected_at"]
    list_filter = ["vignette__study", "system__kind", "selected", "origin"]
    search_fields = ["action", "system__key", "vignette__key"]
    readonly_fields = ["selected", "selected_by", "selected_at", "created_at"]
    inlines = [FeatureInline]
    list_select_related = ["system", "vignette", "selected_by"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        # The dropdowns offer the answer's own study's systems and vignettes (a new answer: ?study=<id>).
        form = super().get_form(request, obj, change, **kwargs)
        study_id = obj.vignette.study_id if obj else request.GET.get("study")
        if study_id and str(study_id).isdigit():
            for name in ("system", "vignette"):
                if name in form.base_fields:
                    field = form.base_fields[name]
                    assert isinstance(field, forms.ModelChoiceField)
                    assert field.queryset is not None  # a foreign key's field: its model's rows
                    field.queryset = field.queryset.filter(study_id=study_id)
        return form

    def has_change_permission(self, request, obj=None):
        # Once a study has gone live, judges have seen its answers: they stay as they were.
        if obj is not None and is_frozen(obj.vignette.study):
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if obj is not None and is_frozen(obj.vignette.study):
            return False
        return super().has_delete_permission(request, obj)
