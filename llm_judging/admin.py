"""Researcher admin for LLM judging: judge models, "Judge with LLMs" (start a run), runs and every call."""

import json

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from llm_collect import calls, client
from llm_collect.admin import confirm_paid, confirmed, progress_bar
from llm_collect.calls.config import sending_notes
from surveys.admin.teams import TeamScoped
from surveys.models import Study
from surveys.services.teams import studies_for

from .models import JudgeCall, JudgeModel, JudgingRun
from .services.runs import check_judges_of, preview_judging_run, start_judging_run


class JudgeChoices(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj) -> str:
        return f"{obj.key} ({obj.study.slug})"  # a team with several studies has a judge of each name in each


class StartJudgingForm(forms.Form):
    study = forms.ModelChoiceField(queryset=Study.objects.none(), help_text="The studies you may act on.")
    judges = JudgeChoices(
        queryset=JudgeModel.objects.none(), help_text="The study's judge models: add them under Judge models."
    )
    samples = forms.IntegerField(min_value=1, max_value=20, initial=1, help_text="Picks per cell and display order.")
    orders = forms.ChoiceField(choices=JudgingRun.Orders.choices, initial=JudgingRun.Orders.BOTH)
    retry_failed = forms.BooleanField(required=False, help_text="Ask again where earlier runs failed or were flagged.")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        study, judges = self.fields["study"], self.fields["judges"]
        assert isinstance(study, forms.ModelChoiceField)
        assert isinstance(judges, forms.ModelChoiceField)
        study.queryset = studies_for(user, acting=True)  # paid calls: owners and researchers
        # Only judge models of those studies: another team's (its base_url, its key variable) is never offered.
        judges.queryset = JudgeModel.objects.filter(study__in=study.queryset).select_related("study")

    def clean(self):
        data = super().clean()
        if data and data.get("study") and data.get("judges"):
            try:
                check_judges_of(study=data["study"], judges=list(data["judges"]))
            except ValidationError as exc:
                self.add_error("judges", exc)
        return data


class JudgeModelForm(forms.ModelForm):
    """Refuses a key variable the deployment does not allow (LLM_KEY_VARIABLES), or a base_url no call may go to,
    with a key or without (LLM_ALLOWED_HOSTS, and the addresses it resolves to): llm_collect/keys.py, checked again
    at every call."""

    class Meta:
        model = JudgeModel
        fields = ["study", "key", "provider", "model", "base_url", "api_key_env", "parameters"]

    def clean(self):
        data = super().clean()
        if data is not None and not self.errors:
            try:
                client.check_key_allowed(calls.target_for(JudgeModel(**data)), resolve=True)
            except client.KeyRefused as exc:
                field = "api_key_env" if "LLM_KEY_VARIABLES" in str(exc) else "base_url"
                self.add_error(field, str(exc))
        return data

    def validate_unique(self):
        super().validate_unique()
        # The study is read-only once set (not a form field then), and Django skips the constraints of fields
        # outside the form: the key must still be unique within the study.
        try:
            self.instance.validate_constraints(exclude={"id"})
        except ValidationError as exc:
            self.add_error(None, exc)


@admin.register(JudgeModel)
class JudgeModelAdmin(TeamScoped, admin.ModelAdmin):
    """A judge model is its study's (docs/teams.md): TeamScoped shows it, and lets it be changed or chosen, only
    to that study's team (viewers read only); one without a study only to superusers."""

    form = JudgeModelForm
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}  # a bare host gets https, not http
    list_display = ["key", "study", "provider", "model", "base_url", "api_key_env"]
    list_filter = ["study"]
    search_fields = ["key", "model"]

    def get_readonly_fields(self, request, obj=None):
        # Its runs and calls are that study's: moving it would hand them, and its configuration, to another team.
        fixed = ["study"] if obj is not None and obj.study_id is not None else []
        return [*fixed, "what_is_sent"]

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change, **kwargs)
        if "study" in form.base_fields:  # only a superuser may leave one without a study (seen by superusers only)
            form.base_fields["study"].required = not request.user.is_superuser
        return form

    @admin.display(description="What is changed before sending")
    def what_is_sent(self, judge: JudgeModel) -> str:
        notes = sending_notes(judge) if judge.pk else []
        if not notes:
            return "Nothing: every parameter is sent as it is."
        return format_html("<ul>{}</ul>", format_html_join("", "<li>{}</li>", ((note,) for note in notes)))


@admin.register(JudgingRun)
class JudgingRunAdmin(TeamScoped, admin.ModelAdmin):
    list_display = ["__str__", "study", "judge_list", "orders", "samples", "planned", "progress", "cost", "created_at"]
    list_filter = ["study"]
    readonly_fields = ["study", "judges", "samples", "orders", "created_by", "created_at", "planned", "already_present",
                       "progress", "calls_link"]  # fmt: skip

    @admin.display(description="Judges")
    def judge_list(self, run):
        return ", ".join(j.key for j in run.judges.all())

    @admin.display(description="Progress")
    def progress(self, run):
        return progress_bar(run.counts())

    @admin.display(description="Cost (USD, est.)")
    def cost(self, run):
        return f"{run.counts()['cost']:.2f}"

    @admin.display(description="Calls")
    def calls_link(self, run):
        url = reverse("admin:llm_judging_judgecall_changelist") + f"?run__id__exact={run.pk}"
        page = reverse("llm_judging:study", args=[run.study.slug])
        return format_html(
            '<a href="{}">Every call of this run</a> · <a href="{}">Agreement and estimates</a>', url, page
        )

    def add_view(self, request, form_url="", extra_context=None):
        """ "Judge with LLMs": the run is made by the service, never by a bare ModelForm save.

        Replacing Django's add view drops its permission check: it is made here (model permission; the
        study choices are those the user may act on)."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = StartJudgingForm(request.POST or None, initial={"study": request.GET.get("study")}, user=request.user)
        status = 200
        if request.method == "POST" and form.is_valid() and not confirmed(request):
            data = form.cleaned_data
            try:
                estimates = preview_judging_run(**data)
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                what = (
                    f"Judge '{data['study'].slug}' with {', '.join(j.key for j in data['judges'])}: every cell by "
                    "each judge, in the orders chosen, each item once; items judged before are not asked again."
                )
                problems = calls.missing_keys(list(data["judges"]))
                for problem in problems:  # named on the form, which keeps what was chosen
                    form.add_error(None, problem)
                if not problems:
                    back = reverse("admin:llm_judging_judgingrun_add")
                    return confirm_paid(
                        self, request, what=what, estimates=estimates, button="Start judging", back=back
                    )
        if request.method == "POST" and form.is_valid() and confirmed(request):
            try:
                run = start_judging_run(user=request.user, **form.cleaned_data)
            except ValidationError as exc:
                form.add_error(None, exc)
            except calls.BrokerUnavailable as exc:
                form.add_error(None, str(exc))
                status = 503
            else:
                messages.success(request, f"{run}: {run.planned} calls queued, {run.already_present} judged before.")
                return redirect("admin:llm_judging_judgingrun_change", run.pk)
        context = {
            **self.admin_site.each_context(request),
            "form": form,
            "title": "Judge with LLMs",
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/llm_judging/start.html", context, status=status)


@admin.register(JudgeCall)
class JudgeCallAdmin(TeamScoped, admin.ModelAdmin):
    study_path = "cell__study"  # never empty: a call outlives its run (run is set null when the run is deleted)
    list_display = [
        "__str__",
        "status",
        "outcome",
        "attempts",
        "picks_shown",
        "input_tokens",
        "output_tokens",
        "latency_ms",
        "cost_estimate",
    ]
    # The judges of this user's calls only, never every judge model's key.
    list_filter = ["status", "outcome", ("judge", admin.RelatedOnlyFieldListFilter), "order", "run"]
    list_select_related = ["judge"]
    exclude = ["raw_request", "raw_response", "history"]
    readonly_fields = [
        f.name for f in JudgeCall._meta.fields if f.name not in ("raw_request", "raw_response", "history")
    ]
    readonly_fields += ["request_json", "response_json", "history_json"]

    def has_add_permission(self, request):
        return False  # made by runs only

    @admin.display(description="Picks")
    def picks_shown(self, call):
        return " ".join(f"{k}:{v}" for k, v in call.picks.items()) or "–"

    def pretty(self, value):
        return format_html("<pre style='white-space:pre-wrap;max-width:70em'>{}</pre>", json.dumps(value, indent=2))

    @admin.display(description="Request as sent")
    def request_json(self, call):
        return self.pretty(call.raw_request)

    @admin.display(description="Reply as received")
    def response_json(self, call):
        return self.pretty(call.raw_response)

    @admin.display(description="Attempts")
    def history_json(self, call):
        return self.pretty(call.history)
