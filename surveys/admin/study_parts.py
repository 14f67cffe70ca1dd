"""The study's parts inline on its page: questions (a new study starts with the method's five), vignettes, systems."""

from django import forms
from django.contrib import admin
from django.utils.html import format_html_join

from ..llm_capabilities import parameter_notes
from ..models import METHOD_QUESTIONS, Question, System, Vignette
from .frozen import FrozenWhenLive


class StudyPartFormSet(forms.BaseInlineFormSet):
    """The rows of a study's questions, vignettes or systems: two with one key are named as such."""

    def get_unique_error_message(self, unique_check):
        if "key" in unique_check:
            meta = self.model._meta
            return f"Two {meta.verbose_name_plural} have the same key: each {meta.verbose_name} needs its own key."
        return super().get_unique_error_message(unique_check)


class QuestionForm(forms.ModelForm):
    def has_changed(self):
        # A new study's prefilled question is saved as shown, untouched; one whose key and text were
        # both cleared is left out (a new row has no delete box).
        if self.instance.pk is None and self.initial:
            return any(self.data.get(self.add_prefix(name), "").strip() for name in ("key", "text"))
        return super().has_changed()


class QuestionInline(FrozenWhenLive, admin.TabularInline):
    model = Question
    form = QuestionForm
    formset = StudyPartFormSet
    extra = 0
    fields = ["position", "key", "label", "text", "translations"]

    def get_extra(self, request, obj=None, **kwargs):
        return len(METHOD_QUESTIONS) if obj is None else 0  # a new study: the method's five, prefilled

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        compact = {
            "position": forms.NumberInput(attrs={"class": "mj-position"}),
            "key": forms.TextInput(attrs={"size": 14}),
            "text": forms.Textarea(attrs={"rows": 2, "cols": 60}),
            "translations": forms.Textarea(attrs={"rows": 2, "cols": 24}),
        }
        if db_field.name in compact:
            kwargs["widget"] = compact[db_field.name]
        return super().formfield_for_dbfield(db_field, request, **kwargs)


def method_questions() -> list[dict]:
    """The initial rows of a new study's questions inline: the method's five, in order."""
    return [{"position": n, "key": key, "text": text} for n, (key, text) in enumerate(METHOD_QUESTIONS, start=1)]


class VignetteInline(FrozenWhenLive, admin.StackedInline):
    model = Vignette
    formset = StudyPartFormSet
    extra = 0
    fields = [("position", "key", "character"), ("source", "set"), "text", "translations"]
    show_change_link = True


class SystemInline(FrozenWhenLive, admin.TabularInline):
    model = System
    formset = StudyPartFormSet
    extra = 0
    fields = ["position", "key", "label", "kind", "provider", "model", "base_url", "api_key_env", "parameters"]
    readonly_fields = ["not_sent"]

    def get_fields(self, request, obj=None):
        return [*super().get_fields(request, obj), "not_sent"]  # shown, never posted

    @admin.display(description="Changed before sending")
    def not_sent(self, system: System) -> str:
        """What the model does not take, renamed or left out (README, "Model capabilities"); empty: nothing."""
        if not system.pk or system.kind != System.Kind.LLM:
            return ""
        notes = parameter_notes(system.provider, system.model, system.parameters or {})
        return format_html_join("", "<div>{}</div>", ((note,) for note in notes)) or "nothing"

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        # Nine columns side by side: compact widgets keep the row within the page.
        compact = {
            "position": forms.NumberInput(attrs={"class": "mj-position"}),
            **{name: forms.TextInput(attrs={"size": 12}) for name in ["key", "label", "model", "api_key_env"]},
            "base_url": forms.URLInput(attrs={"size": 16}),
            "parameters": forms.Textarea(attrs={"rows": 2, "cols": 16}),
        }
        if db_field.name in compact:
            kwargs["widget"] = compact[db_field.name]
        if db_field.name == "base_url":
            kwargs["assume_scheme"] = "https"  # Django 6's default; a bare host gets https, not http
        return super().formfield_for_dbfield(db_field, request, **kwargs)
