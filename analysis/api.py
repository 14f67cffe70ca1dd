"""Results API (token or session authentication, staff, their teams' studies only; another's is 404): studies, progress, results, exports."""

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.decorators import api_view, permission_classes, renderer_classes
from rest_framework.exceptions import APIException, NotFound
from rest_framework.pagination import PageNumberPagination
from rest_framework.permissions import IsAdminUser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response

from surveys.models import Study
from surveys.services.teams import check_can_act, studies_for

from . import exports
from .forms import PowerForm
from .models import AnalysisRun
from .power.levers import power_json
from .serializers import AnalysisRunOut, ProgressOut, RefitOut, StudyDetailOut, StudyOut, StudyPageOut
from .services import RefitOutcome, request_refit, study_progress
from .services.power_plan import page_plan
from .services.power_runs import answer_sd_prefill, power_of_run, request_power_run
from .services.study_comparison import compare_studies, comparison_json


class TextRenderer(BaseRenderer):
    """Lets clients ask for CSV or text; exports return their own response, errors render as text."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data if isinstance(data, str | bytes) else str(data)


class PlainTextRenderer(TextRenderer):
    media_type = "text/plain"
    format = "txt"


RUN_PARAMETER = OpenApiParameter(
    "run", OpenApiTypes.INT, description="A finished run's id (default: the latest finished run)"
)


class StudyPages(PageNumberPagination):
    """Studies a page at a time (?page=N, ?page_size= up to 500): a list costs the same however many there are."""

    page_size_query_param = "page_size"
    max_page_size = 500


@extend_schema(
    responses=StudyPageOut,
    operation_id="api_studies_list",
    parameters=[
        OpenApiParameter("page", OpenApiTypes.INT, description="Page number (from 1)"),
        OpenApiParameter("page_size", OpenApiTypes.INT, description="Studies per page (default 50, at most 500)"),
    ],
    summary="Studies, newest first, a page at a time: {count, next, previous, results}",
)
@api_view(["GET"])
@permission_classes([IsAdminUser])
def study_list(request):
    studies = studies_for(request.user).select_related("reference_system").order_by("-created_at", "-id")
    pages = StudyPages()
    page = pages.paginate_queryset(studies, request)
    return pages.get_paginated_response(StudyOut(page, many=True).data)


@extend_schema(responses=StudyDetailOut, summary="A study's design")
@api_view(["GET"])
@permission_classes([IsAdminUser])
def study_detail(request, slug):
    study = get_object_or_404(studies_for(request.user).prefetch_related("systems", "questions"), slug=slug)
    return Response(StudyDetailOut(study).data)


@extend_schema(responses=ProgressOut, summary="Cells filled, participants by status, exclusions")
@api_view(["GET"])
@permission_classes([IsAdminUser])
def study_progress_view(request, slug):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    return Response(ProgressOut(study_progress(study=study)).data)


def _run(request, study: Study) -> AnalysisRun:
    run_id = request.query_params.get("run", "")
    runs = AnalysisRun.objects.finished().filter(study=study)
    run = runs.filter(pk=run_id).first() if run_id.isdigit() else runs.order_by("-created_at", "-id").first()
    if run is None:
        raise NotFound("No finished analysis run of this study (refit it first, or check the run id).")
    return run


@extend_schema(responses=AnalysisRunOut, parameters=[RUN_PARAMETER], summary="The latest results")
@api_view(["GET"])
@permission_classes([IsAdminUser])
def latest_results(request, slug):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    return Response(AnalysisRunOut(_run(request, study)).data)


class BrokerUnavailable(APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "broker_unavailable"


@extend_schema(
    request=None,
    responses={202: RefitOut, 201: RefitOut, 503: OpenApiTypes.OBJECT},
    summary="Queue a refit (201 when no broker is configured and it ran at once; 503 when the broker is down)",
)
@api_view(["POST"])
@permission_classes([IsAdminUser])
def refit(request, slug):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    check_can_act(request.user, study)  # 403 for a viewer (DRF answers PermissionDenied so)
    asked = request_refit(study=study, requested_by=request.user)
    if asked.outcome == RefitOutcome.UNREACHABLE:
        raise BrokerUnavailable(asked.message)
    body = {
        "queued": asked.outcome == RefitOutcome.QUEUED,
        "study": study.slug,
        "run": asked.run.pk if asked.run else None,
        "detail": asked.message,
    }
    code = status.HTTP_202_ACCEPTED if asked.outcome == RefitOutcome.QUEUED else status.HTTP_201_CREATED
    return Response(RefitOut(body).data, status=code)


@extend_schema(
    parameters=[
        OpenApiParameter("name", str, OpenApiParameter.PATH, enum=list(exports.EXPORTS), description="Which file"),
        RUN_PARAMETER,
    ],
    responses={
        (200, "text/csv"): OpenApiTypes.STR,
        (200, "application/json"): OpenApiTypes.OBJECT,
        (200, "text/plain"): OpenApiTypes.STR,
    },
    summary="An export file",
)
@api_view(["GET"])
@permission_classes([IsAdminUser])
@renderer_classes([JSONRenderer, TextRenderer, PlainTextRenderer])
def export(request, slug, name):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    if name not in exports.EXPORTS:
        raise NotFound(f"No export called '{name}' (exports: {', '.join(exports.EXPORTS)}).")
    _, needs_run = exports.EXPORTS[name]
    run = _run(request, study) if needs_run else None
    return exports.export_response(study=study, name=name, run=run, by=request.user)


@extend_schema(
    parameters=[
        OpenApiParameter(name, description=f"The power page's {name} (default: the study's design)")
        for name in ("vignettes", "repetitions", "vignettes_per_participant", "answer_sd", "order_effect", "gap")
    ],
    responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
    summary="Power of the reported test at a design, with both levers (202 while it is being simulated)",
)
@api_view(["GET"])
@permission_classes([IsAdminUser])
def power(request, slug):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    tau = answer_sd_prefill(study)
    form = PowerForm(PowerForm.initial_for(study, answer_sd=tau.value) | request.query_params.dict())
    if not form.is_valid():
        return Response(form.errors, status=status.HTTP_400_BAD_REQUEST)
    run = request_power_run(study=study, plan=page_plan(form.design()))
    figures = power_of_run(run)
    source = {"answer_sd_source": tau.source if "answer_sd" not in request.query_params else "given"}
    if figures is None:
        body = {"status": run.status, "studies_simulated": run.studies_simulated, "error": run.error or None}
        return Response(body | source, status=status.HTTP_202_ACCEPTED, headers={"Retry-After": "5"})
    return Response({"status": run.status} | power_json(figures.reported, figures.levers) | source)


@extend_schema(
    responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
    summary="Two studies fitted jointly with the study as the set: each shared system's difference (other minus this)",
)
@api_view(["GET"])
@permission_classes([IsAdminUser])
def study_comparison(request, slug, other):
    study = get_object_or_404(studies_for(request.user), slug=slug)
    second = get_object_or_404(studies_for(request.user), slug=other)
    try:
        compared = compare_studies(first=study, second=second)
    except ValidationError as exc:
        return Response({"detail": " ".join(exc.messages)}, status=status.HTTP_400_BAD_REQUEST)
    return Response(comparison_json(compared))
