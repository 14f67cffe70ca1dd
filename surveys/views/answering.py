"""The answer-writing survey's pages for lay respondents (Prolific) and invited experts."""

import uuid
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import translation
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_http_methods

from ..forms.answering import AnswerForm, ConsentForm
from ..models import Invitation, Respondent, Study, StudySnapshot
from ..services.errors import EntryRefused, NotOffered, SessionInUse, StudyClosed
from ..services.invitations import (
    COOKIE_SALT,
    InvitationInUse,
    InvitationWithdrawn,
    browser_may_continue,
    cookie_name,
    open_invitation,
)
from ..services.previews import study_languages, writing_preview_vignette
from ..services.respondent_survey import (
    completion_url,
    full_url,
    mark_task_started,
    next_task,
    record_consent,
    start_prolific_respondent,
    submit_answer,
)
from ..services.teams import role_of
from .entry_limit import rate_limited_entry, respondent_exists

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

# The HTTP status of each refusal: a closed study is gone for good, a survey not offered is not found,
# an invitation held by another browser (or withdrawn) is forbidden here, and a writer's PROLIFIC_PID
# in another Prolific session conflicts with the one in progress.
ENTRY_REFUSED_STATUS = {
    StudyClosed: 410,
    NotOffered: 404,
    InvitationInUse: 403,
    InvitationWithdrawn: 403,
    SessionInUse: 409,
}

SESSION_LOST = gettext_lazy(
    "We could not find your answers in this browser. Please open the study again from its link "
    "(on Prolific, or in your invitation email): your answers so far are kept."
)


def _session_key(study: Study) -> str:
    return f"respondent:{study.pk}"


def _problem(request, message: "StrOrPromise", status: int, return_url: str | None = None):
    context = {"message": message, "return_url": return_url}
    return render(request, "surveys/answering/problem.html", context, status=status)


def _browser_key(request, invitation: Invitation) -> str | None:
    return request.get_signed_cookie(cookie_name(invitation), default=None, salt=COOKIE_SALT)


def _respondent(request, slug: str) -> tuple[Study, Respondent | None]:
    """The respondent this browser is writing as, if any (an invited expert's only in the invitation's browser)."""
    study = get_object_or_404(Study, slug=slug)
    respondent_id = request.session.get(_session_key(study))
    respondent = Respondent.objects.filter(pk=respondent_id, study=study).select_related("study", "invitation").first()
    if respondent and respondent.invitation is not None:  # selected with the respondent: no query
        refusal = browser_may_continue(respondent, _browser_key(request, respondent.invitation))
        if refusal:
            request.refusal = refusal
            return study, None
    return study, respondent


def _lost(request):
    """The page for a browser that has no respondent here (or may not write as the one it had)."""
    return _problem(request, getattr(request, "refusal", None) or SESSION_LOST, 403)


def _next_page(request, respondent: Respondent):
    """Where a respondent goes from here, whatever page they asked for."""
    slug = respondent.study.slug
    if respondent.status == Respondent.Status.STARTED:
        return redirect("surveys:answering-consent", slug)
    if respondent.status in (Respondent.Status.COMPLETED, Respondent.Status.NO_CONSENT):
        return redirect("surveys:answering-done", slug)
    task = next_task(respondent) if respondent.status == Respondent.Status.WRITING else None
    if task is None:
        return _problem(
            request, gettext("We could not give you vignettes to answer. Please contact the researchers."), 409
        )
    return redirect("surveys:answering-write", slug, task.position)


def _enter(request, study: Study, start, *, from_prolific: bool = False):
    try:
        respondent = start()
    except EntryRefused as exc:
        # A Prolific writer turned away from a closed study goes back with the "full" code, not empty-handed.
        back = full_url(study) if from_prolific and isinstance(exc, StudyClosed) else None
        return _problem(request, " ".join(exc.messages), ENTRY_REFUSED_STATUS.get(type(exc), 400), back)
    request.session[_session_key(study)] = respondent.pk
    return _next_page(request, respondent)


@require_http_methods(["GET"])
@rate_limited_entry(resuming=respondent_exists, template="surveys/answering/problem.html")
def entry(request, slug):
    """/r/<slug>/?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…: start or resume a lay respondent."""
    study, respondent = _respondent(request, slug)
    if respondent and not request.GET.get("PROLIFIC_PID"):
        return _next_page(request, respondent)
    return _enter(
        request,
        study,
        lambda: start_prolific_respondent(
            study=study,
            prolific_pid=request.GET.get("PROLIFIC_PID", ""),
            prolific_study_id=request.GET.get("STUDY_ID", ""),
            session_id=request.GET.get("SESSION_ID", ""),
        ),
        from_prolific=True,
    )


@require_http_methods(["GET"])
def invitation_entry(request, slug, token):
    """/r/<slug>/invite/<token>/: an expert's invitation, bound to the first browser, resumable there."""
    invitation = get_object_or_404(Invitation.objects.select_related("study", "system"), study__slug=slug, token=token)
    opened = {}

    def start():
        respondent, opened["key"] = open_invitation(
            invitation=invitation, browser_key=_browser_key(request, invitation)
        )
        return respondent

    response = _enter(request, invitation.study, start)
    if "key" in opened:
        response.set_signed_cookie(
            cookie_name(invitation),
            opened["key"],
            salt=COOKIE_SALT,
            max_age=60 * 60 * 24 * 366,
            httponly=True,
            samesite="Lax",
            secure=settings.SESSION_COOKIE_SECURE,
        )
    return response


@require_http_methods(["GET", "POST"])
def consent(request, slug):
    study, respondent = _respondent(request, slug)
    if respondent is None:
        return _lost(request)
    if respondent.status != Respondent.Status.STARTED:
        return _next_page(request, respondent)
    form = ConsentForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            respondent = record_consent(respondent=respondent, agreed=form.cleaned_data["agree"])
        except ValidationError as exc:
            return _problem(request, " ".join(exc.messages), 409)
        return _next_page(request, respondent)
    context = {"study": study, "respondent": respondent, "form": form, "m": study.answers_per_respondent}
    return render(request, "surveys/answering/consent.html", context, status=400 if form.errors else 200)


@require_http_methods(["GET", "POST"])
def write(request, slug, position):
    study, respondent = _respondent(request, slug)
    if respondent is None:
        return _lost(request)
    task = get_object_or_404(respondent.tasks.select_related("vignette"), position=position)
    if task.submitted_at is not None:
        messages.info(
            request,
            gettext("Your answer on page {number} is saved; it cannot be changed any more.").format(number=position),
        )
    if task.submitted_at is not None or respondent.status != Respondent.Status.WRITING or task != next_task(respondent):
        return _next_page(request, respondent)  # pages come in their order, each answered once
    form = AnswerForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            submit_answer(
                task=task,
                features=data["features"],
                action=data["action"],
                additional_information=data["additional_information"],
                writing_signals=data["writing_signals"],
                texts=form.texts(),
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            respondent.refresh_from_db()
            return _next_page(request, respondent)
    mark_task_started(task=task)
    context = {"study": study, "task": task, "form": form, "page": task.position, "pages": respondent.tasks.count()}
    return render(request, "surveys/answering/write.html", context, status=400 if form.errors else 200)


@require_http_methods(["GET"])
def done(request, slug):
    study, respondent = _respondent(request, slug)
    if respondent is None:
        return _lost(request)
    if respondent.status not in (Respondent.Status.COMPLETED, Respondent.Status.NO_CONSENT):
        return _next_page(request, respondent)
    url = completion_url(respondent)
    if url:
        return redirect(url)
    return render(request, "surveys/answering/done.html", {"study": study, "respondent": respondent})


@staff_member_required
@require_http_methods(["GET", "POST"])
def preview(request, slug):
    """What a respondent sees on a writing page, for a signed-in researcher; nothing is stored."""
    study = get_object_or_404(Study, slug=slug)
    if role_of(request.user, study) is None:
        raise Http404("No Study matches the given query.")  # as for a study the user may not see
    snapshot = _preview_snapshot(study, request.GET.get("snapshot"))  # from the preview's languages page
    vignette = writing_preview_vignette(study=study, snapshot=snapshot)
    if vignette is None:
        return _problem(request, "This study has no vignettes yet.", 404)
    language = request.GET.get("lang")  # a preview in another of the study's languages (views/preview.py)
    if language not in study_languages(study):
        language = translation.get_language()
    with translation.override(language):
        request.LANGUAGE_CODE = language
        form = AnswerForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            messages.success(request, "Preview: this answer would be accepted. Nothing was stored.")
        context = {"study": study, "task": {"vignette": vignette}, "form": form, "page": 1, "preview": True}
        context["pages"] = study.answers_per_respondent
        response = render(request, "surveys/answering/write.html", context, status=400 if form.errors else 200)
        response.headers["Content-Language"] = language
        return response


def _preview_snapshot(study: Study, snapshot_id: str | None) -> StudySnapshot | None:
    if not snapshot_id:
        return None
    try:
        return get_object_or_404(StudySnapshot, pk=uuid.UUID(snapshot_id), study=study)
    except ValueError:
        raise Http404("No such preview.") from None
