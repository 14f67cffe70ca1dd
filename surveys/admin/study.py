"""Studies with their parts inline, answers side by side, status changes and Prolific actions."""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from ..models import DEFAULT_ATTENTION_OPTIONS, METHOD_QUESTIONS, Answer, Question, Study, System, Vignette
from ..prolific import POLICY_HELP, ProlificError, reconcile_study, review_submissions
from ..services.answers import select_answer
from ..services.freezing import (
    FROZEN_STUDY_FIELDS,
    StudyFrozen,
    check_editable,
    copy_as_draft,
    frozen_reason,
    is_frozen,
)
from ..services.lifecycle import close_study, go_live, launch_warnings, missing_for_live
from .frozen import FrozenWhenLive, attempted_frozen_edits
from .prolific_actions import PROLIFIC_ACTIONS


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
    fields = [("position", "key", "character"), "source", "text", "translations"]
    show_change_link = True


class SystemInline(FrozenWhenLive, admin.TabularInline):
    model = System
    formset = StudyPartFormSet
    extra = 0
    fields = ["position", "key", "label", "kind", "provider", "model", "base_url", "api_key_env", "parameters"]

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


class StudyForm(forms.ModelForm):
    """The admin builds the Meta from the fieldsets; this adds the attention options' check."""

    ATTENTION_HELP = (
        'Two options as a JSON list, e.g. ["I read the answers quickly", "I read the answers carefully"]; '
        "the correct choice is the second. Empty ([]): these two."
    )

    # A new study has no systems to choose from yet: the reference is named by the key of a system
    # typed into the Systems rows of the same page, and set once they are saved (StudyAdmin.save_related).
    reference_key = forms.CharField(
        label="Reference system",
        required=False,
        max_length=64,
        help_text=(
            "The key of one of the systems you enter under Systems below, e.g. lay-human. Estimates are reported "
            "relative to it (the method: lay humans). A key, because the systems do not exist until the study "
            "is saved; afterwards you choose it from the study's systems. May be left empty until going live."
        ),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "attention_options" in self.fields:
            self.fields["attention_options"].help_text = self.ATTENTION_HELP

    def clean_reference_key(self):
        key = self.cleaned_data["reference_key"].strip()
        entered = systems_entered(self.data)
        if key and key not in entered:
            listed = ", ".join(entered) if entered else "none yet"
            raise ValidationError(
                f"No system under Systems has the key '{key}' (keys entered: {listed}). "
                "Give the key of one of them, or leave this empty and choose after saving."
            )
        return key

    def clean_attention_options(self):
        # Anything but [] or two texts would silently show judges the default options instead.
        options = self.cleaned_data["attention_options"]
        if options in ([], None):
            return []
        two_texts = isinstance(options, list) and len(options) == 2
        if not (two_texts and all(isinstance(o, str) and o.strip() for o in options)):
            raise ValidationError('Give exactly two options as a JSON list of texts, e.g. ["No", "Yes"], or [].')
        return options


def systems_entered(data) -> list[str]:
    """The keys typed into the systems inline of a posted study form (rows not marked for deletion)."""
    keys = []
    for index in range(int(data.get("systems-TOTAL_FORMS") or 0)):
        key = (data.get(f"systems-{index}-key") or "").strip()
        if key and not data.get(f"systems-{index}-DELETE"):
            keys.append(key)
    return keys


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    form = StudyForm
    list_display = ["name", "slug", "status", "reference_system", "repetitions", "vignettes_per_participant"]
    list_filter = ["status"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = ["status", "went_live_at", "closed_at", "readiness", "answers_link"]
    readonly_fields += ["prolific_status", "prolific_synced_at"]
    inlines = [QuestionInline, VignetteInline, SystemInline]
    actions = ["make_live", "make_closed", "copy_as_new_draft", "review_on_prolific", "reconcile_with_prolific"]
    actions += PROLIFIC_ACTIONS  # create or update the Prolific draft, publish it, add places
    fieldsets = [
        (None, {"fields": ["name", "slug", "description", "status", "readiness", "answers_link", "reference_system"]}),
        (
            "Design",
            {
                "fields": [
                    "repetitions",
                    "vignettes_per_participant",
                    "order_rule",
                    "answers_per_respondent",
                    "reservation_minutes",
                ]
            },
        ),
        ("Analysis", {"fields": ["bias_reduced"]}),
        (
            "Quality and Prolific policy",
            {
                "description": POLICY_HELP,
                "fields": [
                    "minimum_seconds",
                    "fast_fraction_of_median",
                    "estimated_minutes",
                    "attention_prompt",
                    "attention_options",
                    "invalid_policy",
                    "prolific_study_id",
                    "completion_code",
                    "failed_attention_code",
                    "no_consent_code",
                    "screened_out_code",
                ],
            },
        ),
        (
            "Prolific study from the admin",
            {
                "description": "Used by the actions 'Create or update Prolific draft', 'Publish on Prolific' and "
                "'Add places on Prolific'; each shows what it would send before sending it.",
                "fields": [
                    "prolific_currency",
                    "prolific_hourly_rate",
                    "prolific_margin_percent",
                    "prolific_status",
                    "prolific_synced_at",
                ],
            },
        ),
        (
            "Answer writing on Prolific (/r/)",
            {
                "description": "The answer-writing survey's own completion codes, separate from judging's.",
                "fields": ["answering_completion_code", "answering_no_consent_code", "answering_full_code"],
            },
        ),
        # The participants' language; texts in other languages are JSON by language code (docs/study-files.md).
        ("Language", {"fields": ["language", "translations"]}),
        ("LLM instrument", {"classes": ["collapse"], "fields": ["system_prompt", "user_prompt"]}),
        ("History", {"classes": ["collapse"], "fields": ["went_live_at", "closed_at"]}),
    ]

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        return readonly + [name for name in FROZEN_STUDY_FIELDS if name not in readonly] if is_frozen(obj) else readonly

    def get_prepopulated_fields(self, request, obj=None):
        return {} if is_frozen(obj) else super().get_prepopulated_fields(request, obj)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        study = self.get_object(request, object_id)
        if is_frozen(study) and request.method == "POST":
            try:
                check_editable(study, attempted_frozen_edits(request, study, self.inlines))
            except StudyFrozen as exc:  # refused whole, with the reason: nothing of this POST is saved
                self.message_user(request, " ".join(exc.messages), messages.ERROR)
                return redirect(request.path)
        if is_frozen(study) and request.method == "GET":  # say why the fields are read-only
            self.message_user(request, frozen_reason(study), messages.WARNING)
        return super().change_view(request, object_id, form_url, extra_context)

    def save_model(self, request, obj, form, change):
        if change:  # the read-only fields are not on the form; this refuses anything that slips past
            check_editable(Study.objects.get(pk=obj.pk), form.changed_data)
        super().save_model(request, obj, form, change)

    def construct_change_message(self, request, form, formsets, add=False):
        # The change history (who, when: Django's LogEntry) also says what each changed field was before.
        message = super().construct_change_message(request, form, formsets, add)
        if add or not form.changed_data:
            return message
        fields = [
            f"{form.fields[name].label or name} ({form.initial.get(name)!r} → {form.cleaned_data.get(name)!r})"
            for name in form.changed_data
        ]
        return [{"changed": {"fields": fields}}] + [
            item for item in message if "changed" not in item or item["changed"].get("object")
        ]

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if not self._names_reference_by_key(obj):
            return fieldsets
        (name, options), *rest = fieldsets
        fields = ["reference_key" if field == "reference_system" else field for field in options["fields"]]
        description = (
            "A new study starts with the method's five questions and its attention check, below: edit them, "
            "or clear a question's key and text to leave it out."
            if obj is None
            else None
        )
        return [(name, {**options, "fields": fields, "description": description}), *rest]

    @staticmethod
    def _names_reference_by_key(study: Study | None) -> bool:
        # Until the study has systems there is nothing to pick from a list.
        return study is None or (not is_frozen(study) and not study.systems.exists())

    def get_changeform_initial_data(self, request):
        # The attention check's options shown as they will be asked (the default ones are translated).
        return {"attention_options": DEFAULT_ATTENTION_OPTIONS, **super().get_changeform_initial_data(request)}

    def get_formset_kwargs(self, request, obj, inline, prefix):
        kwargs = super().get_formset_kwargs(request, obj, inline, prefix)
        if isinstance(inline, QuestionInline) and obj.pk is None:
            kwargs["initial"] = method_questions()
        return kwargs

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        key = form.cleaned_data.get("reference_key")
        if key:  # checked against the systems rows by the form: they are saved now
            study = form.instance
            study.reference_system = study.systems.get(key=key)
            study.save(update_fields=["reference_system"])

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        if "reference_system" in form.base_fields:
            systems = System.objects.filter(study=obj) if obj else System.objects.none()
            form.base_fields["reference_system"].queryset = systems
        return form

    @admin.display(description="Ready to go live?")
    def readiness(self, study: Study) -> str:
        if study.pk is None or study.status != Study.Status.DRAFT:
            return "—"
        problems = missing_for_live(study)
        notes = "".join(f" Note: {warning}." for warning in launch_warnings(study))
        return ("Yes." if not problems else "Missing: " + "; ".join(problems) + ".") + notes

    @admin.display(description="Answers")
    def answers_link(self, study: Study) -> str:
        if study.pk is None:
            return "—"
        return format_html(
            '<a href="{}">All answers, side by side per vignette</a> · <a href="{}">Collect LLM answers</a>'
            ' · <a href="{}">Dashboard</a>',
            reverse("admin:surveys_study_answers", args=[study.pk]),
            # By URL name: surveys does not import llm_collect or analysis.
            reverse("admin:llm_collect_collectionrun_start") + f"?study={study.pk}",
            reverse("analysis:study", args=[study.slug]),
        )

    @admin.action(description="Go live (checks that every system × vignette has a selected answer)")
    def make_live(self, request, queryset):
        self._change_status(request, queryset, go_live, "is live")
        for study in queryset.filter(status=Study.Status.LIVE):
            for warning in launch_warnings(study):
                self.message_user(request, f"Study '{study.slug}': {warning}.", messages.WARNING)

    @admin.action(description="Close")
    def make_closed(self, request, queryset):
        self._change_status(request, queryset, close_study, "is closed")

    @admin.action(description="Copy as a new draft (questions, vignettes, systems, answers)", permissions=["add"])
    def copy_as_new_draft(self, request, queryset):
        for study in queryset:
            copy = copy_as_draft(study=study)
            self.log_addition(request, copy, [{"added": {}}])
            link = reverse("admin:surveys_study_change", args=[copy.pk])
            self.message_user(
                request,
                format_html("Study '{}' copied as the draft <a href=\"{}\">{}</a>.", study.slug, link, copy.slug),
                messages.SUCCESS,
            )

    @admin.action(
        description="Review submissions on Prolific (approve valid, handle invalid by policy)",
        permissions=["change"],
    )
    def review_on_prolific(self, request, queryset):
        for study in queryset:
            report = review_submissions(study=study, user=request.user)
            acted = report.calls or report.failed
            for line in report.messages:
                self.message_user(request, line, messages.WARNING if report.failed or not acted else messages.INFO)
            if not acted:
                continue  # refused before any call (no study id, no token, nothing to review): no "0 approved"
            summary = (
                f"Study '{study.slug}': {report.approved} approved, {report.rejected} rejected, "
                f"{report.returns_requested} asked to return, {report.failed} failed."
            )
            self.message_user(request, summary, messages.ERROR if report.failed else messages.SUCCESS)

    @admin.action(description="Reconcile with Prolific now", permissions=["change"])
    def reconcile_with_prolific(self, request, queryset):
        for study in queryset:
            try:
                result = reconcile_study(study=study)
            except ProlificError as exc:
                self.message_user(request, f"Study '{study.slug}': {exc}", messages.ERROR)
            else:
                self.message_user(request, str(result), messages.SUCCESS)

    def _change_status(self, request, queryset, change, done: str) -> None:
        for study in queryset:
            try:
                change(study=study)
            except ValidationError as exc:
                self.message_user(request, " ".join(exc.messages), messages.ERROR)
            else:
                self.log_change(request, study, f"Study {done}.")  # who and when, in the study's history
                self.message_user(request, f"Study '{study.slug}' {done}.", messages.SUCCESS)

    def get_urls(self):
        own = [
            path(
                "<int:study_id>/answers/",
                self.admin_site.admin_view(self.answers_view),
                name="surveys_study_answers",
            ),
            path(
                "<int:study_id>/answers/<int:answer_id>/select/",
                self.admin_site.admin_view(self.select_view),
                name="surveys_study_select_answer",
            ),
        ]
        return own + super().get_urls()

    def answers_view(self, request, study_id: int):
        """Every system's answers to each vignette side by side, with the selected one marked."""
        study = get_object_or_404(Study, pk=study_id)
        if not self.has_view_permission(request, study):
            raise PermissionDenied
        systems = list(study.systems.all())
        answers = (
            Answer.objects.for_study(study)
            .select_related("system", "vignette", "selected_by")
            .prefetch_related("features")
        )
        grid: dict[int, dict[int, list[Answer]]] = {}
        for answer in answers:
            grid.setdefault(answer.vignette_id, {}).setdefault(answer.system_id, []).append(answer)
        rows = [
            {"vignette": v, "columns": [{"system": s, "answers": grid.get(v.pk, {}).get(s.pk, [])} for s in systems]}
            for v in study.vignettes.all()
        ]
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "study": study,
            "systems": systems,
            "rows": rows,
            "title": f"Answers of {study.name}",
            "can_select": study.status == Study.Status.DRAFT and self.has_change_permission(request, study),
        }
        return TemplateResponse(request, "admin/surveys/study_answers.html", context)

    def select_view(self, request, study_id: int, answer_id: int):
        answer = get_object_or_404(Answer, pk=answer_id, vignette__study_id=study_id)
        if request.method != "POST" or not self.has_change_permission(request, answer.vignette.study):
            return redirect("admin:surveys_study_answers", study_id)
        try:
            select_answer(answer=answer, user=request.user)
        except ValidationError as exc:
            self.message_user(request, " ".join(exc.messages), messages.ERROR)
        else:
            self.message_user(request, f"Selected {answer} for judging.", messages.SUCCESS)
        return redirect(reverse("admin:surveys_study_answers", args=[study_id]) + f"#vignette-{answer.vignette_id}")
