"""The judging survey's pages: Prolific entry, consent, demographics, pairs, attention check, completion.

Every page first asks where the participant really is (`current_step`) and sends them there when
they asked for another page, so a reload, the back button or an old tab never skips or repeats work.
"""

from collections.abc import Sequence
from operator import attrgetter
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods

from moraljudge.client_address import client_address

from ..forms.judging import AttentionForm, ConsentForm, DemographicsForm, PairForm
from ..models import Assignment, Participant, Study
from ..services.entry_limit import admit_entry, limit_explained_to_the_team
from ..services.errors import EntryRateLimited, SessionInUse
from ..services.judging import (
    Step,
    attention_options,
    completion_code,
    consent_answered,
    current_step,
    demographics_recorded,
    enter_study,
    entry_read,
    finish_participant,
    mark_shown,
    page_content,
    record_page,
    start_preview,
)
from ..services.languages import attention_texts
from ..services.live_content import content_of
from ..services.participation import StepName
from ..services.prolific_link import lab_visitor_params, parse_prolific_params, prolific_return_url
from ..services.teams import role_of

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

STEP_PAGES = {
    StepName.CONSENT: "surveys:judging-consent",
    StepName.DEMOGRAPHICS: "surveys:judging-about-you",
    StepName.ATTENTION: "surveys:judging-check",
}
NO_SESSION = gettext_lazy(
    "We could not find your place in this study in this browser. Please open the study again from its "
    "link on Prolific: your answers so far are kept."
)


# The HTTP status of each refusal at entry; any other is a bad link (400).
ENTRY_REFUSED_STATUS: dict[type[Exception], int] = {EntryRateLimited: 429, SessionInUse: 409}


def _session_key(slug: str) -> str:
    return f"judging:{slug}"


# Which participant this browser is, per study: a signed cookie, so the participant's pages read no
# session row (sessions stay in the database for the researchers; a browser that entered before the
# cookie existed is still found through its session).
COOKIE_SALT = "surveys.judging.participant"


def _cookie_name(slug: str) -> str:
    return f"judging-{slug}"


def _participant_id(request, slug: str) -> int | None:
    signed = request.get_signed_cookie(
        _cookie_name(slug), default=None, salt=COOKIE_SALT, max_age=settings.SESSION_COOKIE_AGE
    )
    if signed is not None and signed.isdigit():
        return int(signed)
    if settings.SESSION_COOKIE_NAME in request.COOKIES:
        return request.session.get(_session_key(slug))
    return None


def _remember(response, slug: str, participant: Participant):
    response.set_signed_cookie(
        _cookie_name(slug),
        str(participant.pk),
        salt=COOKIE_SALT,
        max_age=settings.SESSION_COOKIE_AGE,
        path=reverse("surveys:judging-entry", args=[slug]),
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )
    return response


def _problem(request, study: Study | None, problems: "Sequence[StrOrPromise]", status: int = 400, team_note: str = ""):
    # A refusal with its own advice (wait, or continue elsewhere) is shown without the general advice.
    context = {"study": study, "problems": problems, "advice_given": status in ENTRY_REFUSED_STATUS.values()}
    if team_note and study is not None:
        context["team_note"] = team_note
        context["study_page"] = reverse("admin:surveys_study_change", args=[study.pk])
    return render(request, "surveys/judging/problem.html", context, status=status)


def _to_step(participant: Participant, step: Step | None = None):
    """A redirect to where the participant is (`step` when known already, else read)."""
    step = step or current_step(participant)
    slug = participant.study.slug
    if step.name == StepName.PAIR:
        assert step.assignment is not None  # a pair step always has its pair
        return redirect("surveys:judging-pair", slug, step.assignment.position)
    return redirect(STEP_PAGES.get(step.name, "surveys:judging-done"), slug)


def _at(request, slug: str, *names: StepName):
    """(participant, step, None) when the participant is at one of `names`, else (…, a response)."""
    participant_id = _participant_id(request, slug)
    participant, pages = None, None
    if participant_id is not None and {StepName.PAIR, StepName.ATTENTION} & set(names):
        # One statement: the pages, each with the participant and the study.
        pages = sorted(Assignment.objects.pages_of(participant_id, slug), key=attrgetter("position"))
        participant = pages[0].participant if pages else None
    if participant is None and participant_id is not None:
        participant = next(iter(Participant.objects.of_study(slug).filter(pk=participant_id).order_by()[:1]), None)
    if participant is None:
        return None, None, _problem(request, get_object_or_404(Study, slug=slug), [NO_SESSION], status=403)
    step = current_step(participant, pages or None)
    if step.name not in names:
        return participant, step, _to_step(participant, step)
    return participant, step, None


@require_GET
def entry(request, slug: str):
    """/s/<slug>/?PROLIFIC_PID=…&STUDY_ID=…&SESSION_ID=…; a staff user without them previews."""
    known = _participant_id(request, slug)
    # The study, then this person's participants of it and the one this browser is.
    read = entry_read(slug, pid=(request.GET.get("PROLIFIC_PID") or "").strip() or None, participant_id=known)
    if read is None:
        raise Http404("No Study matches the given query.")
    study, resuming = read.study, read.resuming
    staff = role_of(request.user, study) is not None  # only the study's team may try it (no query for judges)
    try:
        if "PROLIFIC_PID" in request.GET or not (staff or resuming):
            lab = study.lab_study and "PROLIFIC_PID" not in request.GET  # a lab study's link has no Prolific ids
            participant = enter_study(
                study=study,
                params=lab_visitor_params() if lab else parse_prolific_params(request.GET),
                admit=lambda: admit_entry(client_address(request)),
                read=read,
            )
        elif resuming and not (staff and "restart" in request.GET):
            participant = resuming  # the link opened again without its parameters
        else:
            participant = start_preview(study=study)  # staff only
    except ValidationError as exc:
        status = ENTRY_REFUSED_STATUS.get(type(exc), 400)
        # The study's own researcher testing their links: told why, and how a try avoids it.
        note = limit_explained_to_the_team() if staff and isinstance(exc, EntryRateLimited) else ""
        return _problem(request, study, exc.messages, status=status, team_note=note)
    response = _to_step(participant)
    return response if known == participant.pk else _remember(response, slug, participant)


@require_http_methods(["GET", "POST"])
def consent(request, slug: str):
    form = ConsentForm(request.POST or None)
    if form.is_valid():
        # Read once, under the lock the answer is recorded with; from elsewhere it changes nothing.
        answered = consent_answered(participant_id=_participant_id(request, slug), slug=slug, **form.cleaned_data)
        if answered is not None:
            return _to_step(answered)
    participant, _step, elsewhere = _at(request, slug, StepName.CONSENT)
    if elsewhere:
        return elsewhere
    context = {"participant": participant, "form": form, "question_count": len(content_of(participant.study).questions)}
    return render(request, "surveys/judging/consent.html", context)


@require_http_methods(["GET", "POST"])
def about_you(request, slug: str):
    participant, _step, elsewhere = _at(request, slug, StepName.DEMOGRAPHICS)
    if elsewhere:
        return elsewhere
    form = DemographicsForm(request.POST or None)
    if form.is_valid():
        participant, step = demographics_recorded(participant=participant, demographics=form.cleaned_data)
        return _to_step(participant, step)
    return render(request, "surveys/judging/demographics.html", {"participant": participant, "form": form})


@require_http_methods(["GET", "POST"])
def pair(request, slug: str, position: int):
    participant, step, elsewhere = _at(request, slug, StepName.PAIR)
    if participant is None:
        return elsewhere
    pages = {a.position: a for a in step.assignments}
    if position not in pages:
        get_object_or_404(participant.assignments, position=position)  # only one's own pages exist
    if elsewhere or step.assignment.position != position:
        page = pages.get(position) or participant.assignments.filter(position=position).first()
        if page is not None and page.status == Assignment.Status.COMPLETED:
            messages.info(
                request,
                gettext("Your choices for scenario {number} are saved; they cannot be changed.").format(
                    number=position
                ),
            )
        return _to_step(participant, step)
    form = PairForm(request.POST or None, questions=content_of(participant.study).questions)
    if form.is_valid():
        try:
            stored = record_page(
                participant=participant, assignment=step.assignment, picks=form.picks(), questions=form.questions
            )
        except ValidationError:  # a stale page: go on to where the participant really is
            return _to_step(participant)
        if stored is not step.assignment:  # closed before (another tab): read where the participant is
            return _to_step(participant)
        return _to_step(participant, current_step(participant, list(step.assignments)))
    if step.assignment.shown_at is None:  # first shown now (or sent back incomplete before it ever was)
        mark_shown(assignment=step.assignment)
    context = {"participant": participant, "step": step, "form": form, "page": page_content(step.assignment)}
    return render(request, "surveys/judging/pair.html", context)


@require_http_methods(["GET", "POST"])
def check(request, slug: str):
    participant, step, elsewhere = _at(request, slug, StepName.ATTENTION)
    if elsewhere:
        return elsewhere
    study = participant.study
    prompt, options = attention_texts(study, attention_options(study))  # in the study's language
    form = AttentionForm(request.POST or None, prompt=prompt, options=options)
    if form.is_valid():
        choice = form.cleaned_data["choice"]
        participant = finish_participant(participant=participant, attention_choice=choice, pages=step.assignments)
        return _to_step(participant)
    return render(request, "surveys/judging/attention.html", {"participant": participant, "step": step, "form": form})


@require_GET
def done(request, slug: str):
    participant, step, elsewhere = _at(
        request, slug, StepName.COMPLETE, StepName.NO_CONSENT, StepName.FULL, StepName.ENDED
    )
    if elsewhere:
        return elsewhere
    code = completion_code(participant)
    return_url = (
        "" if participant.study.lab_study else prolific_return_url(code)
    )  # a lab study: nobody goes to Prolific
    context = {"participant": participant, "step": step, "code": code, "return_url": return_url}
    return render(request, f"surveys/judging/{step.name.value}.html", context)
