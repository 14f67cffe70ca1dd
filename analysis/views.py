"""The researcher dashboard (staff, their teams' studies only: surveys/services/teams.py): progress, forest plots, diagnostics, comparisons, power, exports."""

from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_cache_control
from django.views.decorators.http import require_GET, require_POST

from surveys.models import Study
from surveys.prolific import verification_counts
from surveys.services.researcher_tries import study_links
from surveys.services.teams import can_act, check_can_act, studies_for

from . import exports, plots, set_plots
from .forms import CompareForm, PowerForm
from .models import AnalysisRun
from .services import request_refit, study_progress
from .services.dashboard import dashboard_results, label_of, question_labels, refit_said
from .services.judge_quality import quality_summary
from .services.measured_judges import measured_on_study
from .services.power_plan import plan_power_page
from .services.power_runs import answer_sd_prefill
from .services.study_comparison import compare_studies, compared_tables


def chosen_run(request, study: Study) -> AnalysisRun | None:
    """The run asked for with ?run=ID (finished, this study's), else the latest finished one."""
    run_id = request.GET.get("run", "")
    if run_id:
        if not run_id.isdigit():
            raise Http404("No such analysis run.")
        return get_object_or_404(AnalysisRun.objects.finished(), pk=run_id, study=study)
    return AnalysisRun.objects.latest_for(study)


@staff_member_required
@require_GET
def study_list(request):
    studies = studies_for(request.user).order_by("-created_at")
    rows = [{"study": study, "run": AnalysisRun.objects.latest_for(study)} for study in studies]
    return render(request, "analysis/study_list.html", {"rows": rows})


@staff_member_required
@require_GET
def study_dashboard(request, slug):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    run = chosen_run(request, study)
    compare = CompareForm(request.GET or None, study=study, among=studies_for(request.user))
    other = compare.cleaned_data["compare"] if compare.is_valid() else None
    other_run = AnalysisRun.objects.latest_for(other) if other else None
    context = {
        "study": study,
        "progress": study_progress(study=study),
        "verification": verification_counts(study),
        "run": run,
        "run_id": str(run.pk) if run else "",
        "fitted": dashboard_results(run=run, beside=other_run),
        "recent_runs": AnalysisRun.objects.filter(study=study)[:8],
        "newest": AnalysisRun.objects.filter(study=study).first(),
        "compare_form": compare,
        "other": other,
        "other_run": other_run,
        "export_names": list(exports.EXPORTS),
        "links": study_links(study=study, absolute=request.build_absolute_uri),
        "judge_quality": quality_summary(study=study),
        "may_act": can_act(request.user, study),  # a viewer is not shown the Refit button (docs/teams.md)
    }
    return render(request, "analysis/study_dashboard.html", context)


@staff_member_required
@require_POST
def refit(request, slug):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    check_can_act(request.user, study)  # a viewer sees the results; owners and researchers refit
    bad_news, message = refit_said(request_refit(study=study, requested_by=request.user))
    messages.add_message(request, messages.ERROR if bad_news else messages.SUCCESS, message)
    return redirect("analysis:study", slug=study.slug)


@staff_member_required
@require_GET
def plot(request, slug, question, fmt):
    """A question's forest plot; with ?compare=SLUG, beside the other study's latest on one x axis;
    with ?width=narrow, laid out for a phone's width (labels and legend wrapped, panels one above the other)."""
    study = get_object_or_404(studies_for(request.user), slug=slug)
    run = chosen_run(request, study)
    fitted = run.read_results() if run is not None and fmt in plots.CONTENT_TYPES else None
    result = fitted.question(question) if fitted is not None else None
    if run is None or fitted is None or result is None:
        raise Http404("No such plot: refit the study, or check the question and format (svg or png).")
    label = label_of(question, question_labels(study))
    narrow = request.GET.get("width") == "narrow"  # the dashboard's <picture> asks for it on a phone
    if request.GET.get("compare"):
        other = get_object_or_404(studies_for(request.user), slug=request.GET["compare"])
        other_run = AnalysisRun.objects.latest_for(other)
        beside = other_run.read_results() if other_run else None
        beside_result = beside.question(question) if beside is not None else None
        if beside is None or beside_result is None:
            raise Http404(f"'{other.name}' has no finished analysis of '{question}'.")
        panels = [
            plots.Panel(fitted.systems, result, study.name),
            plots.Panel(beside.systems, beside_result, other.name),
        ]
        figure = plots.comparison_plot(panels=panels, title=label, narrow=narrow)
    else:
        panels = [plots.Panel(fitted.systems, result, label)]
        figure = plots.forest_plot(systems=fitted.systems, result=result, title=label, narrow=narrow)
    response = HttpResponse(plots.render(figure, fmt), content_type=plots.CONTENT_TYPES[fmt])
    if request.GET.get("run") and len(panels) == 1:
        patch_cache_control(response, private=True, max_age=24 * 3600)  # a stored run never changes
    disposition = "attachment" if request.GET.get("download") else "inline"
    suffix = f"-vs-{request.GET['compare']}" if len(panels) > 1 else ""
    response["Content-Disposition"] = f'{disposition}; filename="{study.slug}-{question}-run{run.pk}{suffix}.{fmt}"'
    return response


@staff_member_required
@require_GET
def study_comparison(request, slug, other):
    """Two of the user's studies fitted jointly with the study as the set: each shared system's difference."""
    study = get_object_or_404(studies_for(request.user), slug=slug)
    second = get_object_or_404(studies_for(request.user), slug=other)
    try:
        compared = compare_studies(first=study, second=second)
    except ValidationError as exc:
        return render(request, "analysis/study_comparison.html", {"study": study, "other": second,
                                                                  "refused": " ".join(exc.messages)}, status=400)  # fmt: skip
    return render(request, "analysis/study_comparison.html", {"study": study, "other": second,
                                                              "compared": compared_tables(compared)})  # fmt: skip


@staff_member_required
@require_GET
def set_plot(request, slug, question, fmt):
    """A question's results by vignette set beside the differences between sets (a run with sets only)."""
    study = get_object_or_404(studies_for(request.user), slug=slug)
    run = chosen_run(request, study)
    fitted = run.read_results() if run is not None and fmt in plots.CONTENT_TYPES else None
    result = fitted.question(question) if fitted is not None else None
    if run is None or fitted is None or result is None or result.by_set is None or result.fit is None:
        raise Http404("No plot by set: this run has no results by vignette set for this question.")
    label = label_of(question, question_labels(study))
    figure = set_plots.set_plot(systems=fitted.systems, by_set=result.by_set, reference=result.fit.reference,
                                title=label)  # fmt: skip
    response = HttpResponse(plots.render(figure, fmt), content_type=plots.CONTENT_TYPES[fmt])
    if request.GET.get("run"):
        patch_cache_control(response, private=True, max_age=24 * 3600)  # a stored run never changes
    disposition = "attachment" if request.GET.get("download") else "inline"
    response["Content-Disposition"] = f'{disposition}; filename="{study.slug}-{question}-sets-run{run.pk}.{fmt}"'
    return response


@staff_member_required
@require_GET
def export(request, slug, name):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    if name not in exports.EXPORTS:
        raise Http404(f"No export called '{name}'.")
    _, needs_run = exports.EXPORTS[name]
    run = chosen_run(request, study)
    if needs_run and run is None:
        raise Http404("This study has no finished analysis run yet: refit it first.")
    return exports.export_response(study=study, name=name, run=run, by=request.user)


@staff_member_required
@require_GET
def power_page(request, slug):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    measured = measured_on_study(study=study)
    tau = answer_sd_prefill(study)
    initial = PowerForm.initial_for(study, human_agreement=measured.human_agreement, answer_sd=tau.value)
    data = request.GET if "systems" in request.GET else None
    form = PowerForm(
        data,
        initial=initial,
        judges=measured.judges,
        measured_human_agreement=measured.human_agreement,
        answer_sd_source=tau.source,
    )
    plan = plan_power_page(form.design(), form.judge_plan(), study=study) if form.is_valid() else None
    context = {"study": study, "form": form, "plan": plan, "measured_human_agreement": measured.human_agreement}
    return render(request, "analysis/power.html", context)
