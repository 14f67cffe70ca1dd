"""Researcher admin for LLM collection: start a collection, watch its progress, read every call."""

import json

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Count, Q, Sum
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from surveys.admin.teams import TeamScoped, acts_on_a_study
from surveys.models import Study
from surveys.services.teams import studies_for

from .calls import BrokerUnavailable, missing_keys
from .calls.config import sending_notes
from .calls.estimates import CallsEstimate, total_said
from .models import CollectionRun, Generation
from .parsing import __doc__ as weights_policy
from .services import retry_generations, start_collection
from .services.runs import preview_collection, preview_retry, systems_to_ask
from .similarity import self_similarity

STATUS = Generation.Status
OUTCOME = Generation.Outcome


class StartCollectionForm(forms.Form):
    study = forms.ModelChoiceField(queryset=Study.objects.none(), help_text="The studies you may act on.")
    systems = forms.CharField(
        required=False, help_text="Comma-separated LLM system keys; empty means every LLM system of the study."
    )
    samples = forms.IntegerField(min_value=1, max_value=50, initial=5, help_text="The method: 5, the first used.")
    retry_failed = forms.BooleanField(required=False, help_text="Ask again where earlier runs failed.")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        study = self.fields["study"]
        assert isinstance(study, forms.ModelChoiceField)
        study.queryset = studies_for(user, acting=True)  # paid calls: owners and researchers


def progress_bar(counts: dict) -> str:
    total = counts["total"] or 1
    segments = [
        (STATUS.DONE, "#3a7d44"),
        (STATUS.INVALID, "#d08c00"),
        (STATUS.FAILED, "#b23a3a"),
        (STATUS.RUNNING, "#4a78b0"),
        (STATUS.PENDING, "#bbb"),
    ]
    bars = format_html_join(
        "",
        '<span title="{} {}" style="display:inline-block;height:12px;width:{}%;background:{}"></span>',
        ((counts[status], status, round(100 * counts[status] / total, 2), colour) for status, colour in segments),
    )
    return format_html(
        '<div style="width:220px;border:1px solid #999;line-height:0">{}</div>'
        "<small>{} done · {} invalid · {} failed · {} running · {} pending{}</small>",
        bars,
        counts[STATUS.DONE],
        counts[STATUS.INVALID],
        counts[STATUS.FAILED],
        counts[STATUS.RUNNING],
        counts[STATUS.PENDING],
        outcomes_said(counts),
    )


def confirm_paid(
    modeladmin, request, *, what: str, estimates: list[CallsEstimate], button: str, back: str
) -> TemplateResponse:
    """The page before a paid run: calls and estimated cost per model; its button posts the same data back with
    confirmed=yes (both apps' start pages and 'Ask again')."""
    hidden = [
        (name, value)
        for name in request.POST
        if name not in ("csrfmiddlewaretoken", "confirmed")
        for value in request.POST.getlist(name)
    ]
    context = {
        **modeladmin.admin_site.each_context(request),
        "opts": modeladmin.model._meta,
        "title": f"Confirm: {button.lower()}",
        "what": what,
        "estimates": estimates,
        "total": total_said(estimates),
        "calls": sum(e.calls for e in estimates),
        "button": button,
        "back": back,
        "hidden": hidden,
    }
    return TemplateResponse(request, "admin/llm_collect/confirm_paid.html", context)


def confirmed(request) -> bool:
    return request.POST.get("confirmed") == "yes"


def outcomes_said(counts: dict) -> str:
    """ " (2 refused, 1 cut by the length limit)": why rows gave no result, as the providers said."""
    said = [f"{counts[o]} {OUTCOME(o).label.lower()}" for o in OUTCOME.values if counts.get(o)]
    return f" ({', '.join(said)})" if said else ""


@admin.register(CollectionRun)
class CollectionRunAdmin(TeamScoped, admin.ModelAdmin):
    list_display = ["__str__", "study", "samples", "progress", "tokens", "cost", "created_by", "created_at"]
    list_filter = ["study"]
    readonly_fields = [
        "study",
        "systems_list",
        "samples",
        "created_by",
        "created_at",
        "planned",
        "already_present",
        "progress",
        "tokens",
        "cost",
        "self_similarity_table",
        "weights_policy",
    ]
    fields = list(readonly_fields)
    change_list_template = "admin/llm_collect/collectionrun/change_list.html"

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("study", "created_by")
            .annotate(
                n_total=Count("generations"),
                **{f"n_{s}": Count("generations", filter=Q(generations__status=s)) for s in STATUS.values},
                **{f"n_{o}": Count("generations", filter=Q(generations__outcome=o)) for o in OUTCOME.values},
                n_input=Sum("generations__input_tokens"),
                n_output=Sum("generations__output_tokens"),
                n_cost=Sum("generations__cost_estimate"),
            )
        )

    def has_add_permission(self, request):
        return False  # runs are started with "Collect answers for a study"

    def has_change_permission(self, request, obj=None):
        return False

    def counts(self, run: CollectionRun) -> dict:
        if hasattr(run, "n_total"):
            counts = {s: getattr(run, f"n_{s}") for s in [*STATUS.values, *OUTCOME.values]}
            counts["total"] = run.n_total
            return counts
        return run.counts()

    @admin.display(description="Progress")
    def progress(self, run: CollectionRun) -> str:
        return progress_bar(self.counts(run))

    @admin.display(description="Tokens (in / out)")
    def tokens(self, run: CollectionRun) -> str:
        totals = (
            {"input_tokens": run.n_input, "output_tokens": run.n_output}
            if hasattr(run, "n_input") and hasattr(run, "n_output")
            else run.counts()
        )
        return f"{totals['input_tokens'] or 0:,} / {totals['output_tokens'] or 0:,}"

    @admin.display(description="Estimated cost (USD)")
    def cost(self, run: CollectionRun) -> str:
        value = run.n_cost if hasattr(run, "n_cost") else run.counts()["cost"]
        return f"≈ ${float(value or 0):.4f}"

    @admin.display(description="Systems")
    def systems_list(self, run: CollectionRun) -> str:
        return ", ".join(s.key for s in run.systems.all())

    @admin.display(description="Self-similarity (TF-IDF, mean pairwise cosine of samples per vignette)")
    def self_similarity_table(self, run: CollectionRun) -> str:
        values = self_similarity(study=run.study)
        if not values:
            return "No system has two or more samples of any vignette yet."
        return format_html(
            "<table>{}</table>",
            format_html_join("", "<tr><td>{}</td><td>{}</td></tr>", ((k, f"{v:.3f}") for k, v in values.items())),
        )

    @admin.display(description="Weights that do not add up to 100")
    def weights_policy(self, run: CollectionRun) -> str:
        # The parsing module's docstring, its title left out, as paragraphs rather than source lines.
        paragraphs = [" ".join(p.split()).replace("``", "") for p in weights_policy.strip().split("\n\n")[1:]]
        return format_html(
            '<div style="max-width:60em">{}</div>', format_html_join("", "<p>{}</p>", ((p,) for p in paragraphs))
        )

    def changelist_view(self, request, extra_context=None):
        # "Collect answers for a study" is shown only to who may start one (model permission and a study to act on).
        may_collect = request.user.has_perm("llm_collect.add_collectionrun") and acts_on_a_study(request)
        return super().changelist_view(request, {**(extra_context or {}), "may_collect": may_collect})

    def get_urls(self):
        own = [
            path("start/", self.admin_site.admin_view(self.start_view), name="llm_collect_collectionrun_start"),
        ]
        return own + super().get_urls()

    def start_view(self, request):
        """Collect answers for a study: one task per LLM system × vignette × sample."""
        if not request.user.has_perm("llm_collect.add_collectionrun"):
            raise PermissionDenied
        form = StartCollectionForm(request.POST or None, initial={"study": request.GET.get("study")}, user=request.user)
        status = 200
        if request.method == "POST" and form.is_valid() and not confirmed(request):
            keys = [k.strip() for k in form.cleaned_data["systems"].split(",") if k.strip()] or None
            study, samples = form.cleaned_data["study"], form.cleaned_data["samples"]
            try:
                estimates = preview_collection(
                    study=study, system_keys=keys, samples=samples, retry_failed=form.cleaned_data["retry_failed"]
                )
            except ValidationError as exc:
                for message in exc.messages:
                    form.add_error(None, message)
            else:
                what = (
                    f"Collect answers for '{study.slug}': each LLM system × vignette × sample up to {samples}, "
                    "finished samples not asked again."
                )
                problems = missing_keys(systems_to_ask(study, keys))
                for problem in problems:  # named on the form, which keeps what was typed
                    form.add_error(None, problem)
                if not problems:
                    back = reverse("admin:llm_collect_collectionrun_start")
                    return confirm_paid(
                        self, request, what=what, estimates=estimates, button="Start collecting", back=back
                    )
        if request.method == "POST" and form.is_valid() and confirmed(request):
            keys = [k.strip() for k in form.cleaned_data["systems"].split(",") if k.strip()] or None
            try:
                run = start_collection(
                    study=form.cleaned_data["study"],
                    system_keys=keys,
                    samples=form.cleaned_data["samples"],
                    user=request.user,
                    retry_failed=form.cleaned_data["retry_failed"],
                )
            except ValidationError as exc:
                for message in exc.messages:
                    form.add_error(None, message)
            except BrokerUnavailable as exc:
                form.add_error(None, str(exc))
                status = 503
            else:
                self.message_user(
                    request,
                    f"Collection run {run.pk} started: {run.planned} generations queued, "
                    f"{run.already_present} already answered.",
                    messages.SUCCESS,
                )
                return redirect(reverse("admin:llm_collect_collectionrun_change", args=[run.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "form": form,
            "title": "Collect answers for a study",
            "in_process": settings.CELERY_TASK_ALWAYS_EAGER,
            "notes": self.study_notes(request.POST.get("study") or request.GET.get("study"), request.user),
        }
        return TemplateResponse(request, "admin/llm_collect/collectionrun/start.html", context, status=status)

    @staticmethod
    def study_notes(study_id, user) -> list[tuple[str, list[str]]]:
        """Each LLM system of the chosen study with what is changed before its parameters are sent, and why."""
        study = studies_for(user, acting=True).filter(pk=study_id).first() if str(study_id or "").isdigit() else None
        if study is None:
            return []
        return [(s.key, sending_notes(s)) for s in study.systems.filter(kind="llm") if sending_notes(s)]


@admin.register(Generation)
class GenerationAdmin(TeamScoped, admin.ModelAdmin):
    study_path = "vignette__study"
    list_display = [
        "__str__",
        "status",
        "outcome",
        "attempts",
        "normalised",
        "input_tokens",
        "output_tokens",
        "cost_estimate",
        "latency_ms",
        "model_version",
        "finish_reason",
        "finished_at",
    ]
    list_filter = ["status", "outcome", "normalised", "vignette__study", "system__provider", "run"]
    search_fields = ["system__key", "vignette__key", "error", "raw_text"]
    list_select_related = ["system", "vignette"]
    actions = ["retry"]
    readonly_fields = [
        "run",
        "system",
        "vignette",
        "sample",
        "status",
        "attempts",
        "answer",
        "outcome",
        "outcome_reason",
        "error_text",
        "raw_text_block",
        "normalised",
        "original_weights",
        "input_tokens",
        "output_tokens",
        "cost_estimate",
        "latency_ms",
        "model_version",
        "finish_reason",
        "queued_at",
        "started_at",
        "finished_at",
        "lease_expires_at",
        "history_block",
        "raw_request_block",
        "raw_response_block",
    ]
    fields = list(readonly_fields)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_retry_permission(self, request) -> bool:
        # Rows are never edited here, but asking again changes them (and pays): the change permission.
        return request.user.has_perm("llm_collect.change_generation")

    @admin.action(description="Ask again (failed or invalid only, refusals and blocks included)", permissions=["retry"])
    def retry(self, request, queryset):
        ids = list(queryset.values_list("pk", flat=True))
        if not confirmed(request):
            what = (
                f"Ask again: of the {len(ids)} rows chosen, the failed or invalid ones (refusals and blocks "
                "included) get a fresh set of attempts; done or waiting rows are left as they are."
            )
            back = reverse("admin:llm_collect_generation_changelist")
            return confirm_paid(self, request, what=what, estimates=preview_retry(generation_ids=ids),
                                button="Ask again", back=back)  # fmt: skip
        n = retry_generations(generation_ids=ids, user=request.user)
        self.message_user(request, f"{n} generations queued again.", messages.SUCCESS)
        return None

    @staticmethod
    def pre(value) -> str:
        if not isinstance(value, str):
            value = json.dumps(value, indent=2, ensure_ascii=False)
        return format_html('<pre style="white-space:pre-wrap;max-width:80em">{}</pre>', value or "—")

    @admin.display(description="Error")
    def error_text(self, gen: Generation) -> str:
        return self.pre(gen.error)

    @admin.display(description="Raw text")
    def raw_text_block(self, gen: Generation) -> str:
        return self.pre(gen.raw_text)

    @admin.display(description="Attempts log")
    def history_block(self, gen: Generation) -> str:
        return self.pre(gen.history)

    @admin.display(description="Request (last call)")
    def raw_request_block(self, gen: Generation) -> str:
        return self.pre(gen.raw_request)

    @admin.display(description="Response (last call)")
    def raw_response_block(self, gen: Generation) -> str:
        return self.pre(gen.raw_response)
