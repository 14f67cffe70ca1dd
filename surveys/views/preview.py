"""A researcher's preview of a study before it goes live: the judging pages from a preview snapshot.

Only the study's team may open it. The place in the walk (consent, about you, pair N, check, done) is the
URL; the forms are checked as for a judge, then the next page follows. Nothing is recorded (previews.py).
"""

from django import forms
from django.contrib.admin.views.decorators import staff_member_required
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.views.decorators.http import require_http_methods

from ..forms.judging import AttentionForm, ConsentForm, DemographicsForm, PairForm
from ..models import Study, StudySnapshot
from ..services.judging import attention_options
from ..services.languages import attention_texts
from ..services.previews import (
    PreviewVisitor,
    preview_pages,
    preview_questions,
    study_languages,
    untranslated,
    write_preview,
)
from ..services.prolific_link import prolific_return_url
from ..services.teams import role_of


def _study_of_team(request, slug: str) -> Study:
    study = get_object_or_404(Study, slug=slug)
    if role_of(request.user, study) is None:
        raise Http404("No Study matches the given query.")  # as for a study the user may not see
    return study


@staff_member_required
@require_http_methods(["GET", "POST"])
def start(request, slug: str):
    """GET: what a preview shows; POST: a new preview snapshot of the study as it is now."""
    study = _study_of_team(request, slug)
    if request.method == "POST":
        snapshot = write_preview(study=study, by=request.user)
        return redirect("surveys:preview-languages", slug, snapshot.pk)
    return render(request, "surveys/preview/start.html", {"study": study})


@staff_member_required
def languages(request, slug: str, snapshot):
    study = _study_of_team(request, slug)
    snapshot = get_object_or_404(StudySnapshot, pk=snapshot, study=study)
    shown = [
        {
            "code": language,
            "missing": untranslated(study, language),
            "judge": _url(study, snapshot, language, "consent"),
        }
        for language in study_languages(study)
    ]
    context = {"study": study, "snapshot": snapshot, "languages": shown, "pages": len(preview_pages(snapshot))}
    return render(request, "surveys/preview/languages.html", context)


def _url(study: Study, snapshot: StudySnapshot, language: str, step: str) -> str:
    return reverse("surveys:preview-page", args=[study.slug, snapshot.pk, language, step])


@staff_member_required
@require_http_methods(["GET", "POST"])
def page(request, slug: str, snapshot, language: str, step: str):
    """One page of the judging survey as a judge in `language` would see it; a sent form leads to the next."""
    study = _study_of_team(request, slug)
    snapshot = get_object_or_404(StudySnapshot, pk=snapshot, study=study)
    if language not in study_languages(study):
        raise Http404("The study has no texts in this language.")
    with translation.override(language):
        request.LANGUAGE_CODE = language
        response = _page(request, study, snapshot, language, step)
        response.headers.setdefault("Content-Language", language)
        return response


def _page(request, study: Study, snapshot: StudySnapshot, language: str, step: str):
    pages = preview_pages(snapshot)
    study.snapshot_id = snapshot.pk  # in memory only: the pages (and their cached fragments) are the preview's
    visitor = PreviewVisitor(study)
    context = {
        "participant": visitor,
        "preview_restart": reverse("surveys:preview-languages", args=[study.slug, snapshot.pk]),
    }
    post = request.POST if request.method == "POST" else None

    def next_page(name: str):
        return redirect(_url(study, snapshot, language, name))

    form: forms.Form
    if step == "consent":
        form = ConsentForm(post)
        if form.is_valid():
            if not form.cleaned_data["consent"]:
                code = study.no_consent_code
                context |= {"return_url": "" if study.lab_study else prolific_return_url(code)}
                return render(request, "surveys/judging/no-consent.html", context)
            return next_page("about-you")
        context |= {"form": form, "question_count": len(snapshot.content["questions"])}
        return render(request, "surveys/judging/consent.html", context)
    if step == "about-you":
        form = DemographicsForm(post)
        if form.is_valid():
            return next_page("pair-1" if pages else "check")
        return render(request, "surveys/judging/demographics.html", context | {"form": form})
    if step.startswith("pair-") and step[5:].isdigit() and 1 <= int(step[5:]) <= len(pages):
        number = int(step[5:])
        form = PairForm(post, questions=preview_questions(snapshot))
        if form.is_valid():
            return next_page(f"pair-{number + 1}" if number < len(pages) else "check")
        shown = pages[number - 1]
        context |= {
            "form": form,
            "step": {"done": number - 1, "total": len(pages)},
            "page": {"vignette": shown.vignette, "answers": [("A", shown.first), ("B", shown.second)]},
        }
        return render(request, "surveys/judging/pair.html", context)
    if step == "check":
        prompt, options = attention_texts(study, attention_options(study))
        form = AttentionForm(post, prompt=prompt, options=options)
        if form.is_valid():
            return next_page("done")
        return render(request, "surveys/judging/attention.html", context | {"form": form})
    if step == "done":
        code = study.completion_code
        context |= {"code": code, "return_url": "" if study.lab_study else prolific_return_url(code)}
        return render(request, "surveys/judging/complete.html", context)
    raise Http404("No such page in a preview.")
