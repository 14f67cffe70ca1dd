"""The researcher's LLM-judges page (staff only): agreement, biases, LLM-only and PPI estimates, exports."""

from dataclasses import replace

from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from analysis import plots
from analysis.services.dashboard import label_of, question_labels
from surveys.services.teams import can_act, studies_for

from .models import JudgingRun
from .services.report import EXPORTS, export_lines, judging_report, plot_inputs


@staff_member_required
@require_GET
def study_judges(request, slug):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    report = judging_report(study=study)
    runs = JudgingRun.objects.filter(study=study).prefetch_related("judges")[:10]
    labels = question_labels(study)
    context = {"study": study, "runs": runs, "exports": EXPORTS, "judges": [j.key for j in report["data"].judges]}
    context["may_act"] = can_act(request.user, study)  # only they are told how to start a run
    context.update(
        # Tables and headings name questions by their short labels; plot URLs keep the keys.
        agreement=[replace(row, question=label_of(row.question, labels)) for row in report["agreement"]],
        estimates=[replace(row, question=label_of(row.question, labels)) for row in report["estimates"]],
        questions=[(key, label_of(key, labels)) for key in report["data"].questions],
        no_help=[(label_of(question, labels), judge, why) for question, judge, why in report["no_help"]],
    )
    return render(request, "llm_judging/study_judges.html", context)


@staff_member_required
@require_GET
def export(request, slug, name):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    if name not in EXPORTS:
        raise Http404("No such export.")
    response = StreamingHttpResponse(export_lines(study=study, name=name), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{name}"'
    return response


@staff_member_required
@require_GET
def plot(request, slug, kind, judge, question, fmt):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    inputs = plot_inputs(study=study, question=question, judge=judge, kind=kind)
    if fmt not in plots.CONTENT_TYPES or kind not in ("llm", "ppi") or inputs is None:
        raise Http404("No such plot: no finished judgments of this question by this judge.")
    systems, result = inputs
    label = next((asked.short_label for asked in study.questions.filter(key=question)), question)
    title = f"{label}: {judge} ({'LLM judgments only' if kind == 'llm' else 'PPI, human-calibrated'})"
    interval = "95% Wald CI (this judge's judgments)" if kind == "llm" else "95% PPI CI (calibrated by the humans)"
    figure = plots.forest_plot(systems=systems, result=result, title=title, interval_label=interval)
    return HttpResponse(plots.render(figure, fmt), content_type=plots.CONTENT_TYPES[fmt])
