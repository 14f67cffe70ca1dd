"""The study admin's "Import answers from a CSV file" page (surveys/services/answer_files.py)."""

from typing import TYPE_CHECKING

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path

from ..services.answer_files import AnswerFileError, import_answers

if TYPE_CHECKING:  # mixed into StudyAdmin: the ModelAdmin methods it calls are StudyAdmin's
    _Base = admin.ModelAdmin
else:
    _Base = object

MAX_UPLOAD_BYTES = 5 * 1024 * 1024  # thousands of answers fit; anything larger is not an answers sheet


class AnswerFileForm(forms.Form):
    file = forms.FileField(help_text="CSV (UTF-8; comma, semicolon or tab separated), as docs/study-files.md shows.")


class AnswerImportPage(_Base):
    """Mixed into StudyAdmin: admin:surveys_study_import_answers."""

    def get_urls(self):
        own = [
            path(
                "<int:study_id>/answers/import/",
                self.admin_site.admin_view(self.import_answers_view),
                name="surveys_study_import_answers",
            )
        ]
        return own + super().get_urls()

    def import_answers_view(self, request, study_id: int):
        study = get_object_or_404(self.get_queryset(request), pk=study_id)  # another team's study: 404
        if not self.has_change_permission(request, study):
            raise PermissionDenied
        form = AnswerFileForm(request.POST or None, request.FILES or None)
        errors = []
        if form.is_valid():
            try:
                text = _text_of(form.cleaned_data["file"])
                done = import_answers(study=study, text=text, user=request.user)
            except AnswerFileError as exc:
                errors = exc.errors
            else:
                said = f"{done.created} answers added, {done.updated} updated from {form.cleaned_data['file'].name}."
                self.message_user(request, said, messages.SUCCESS)
                return redirect("admin:surveys_study_answers", study.pk)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "study": study,
            "form": form,
            "errors": errors,
            "title": f"Import answers into {study.name}",
        }
        return TemplateResponse(request, "admin/surveys/import_answers.html", context)


def _text_of(upload) -> str:
    if upload.size > MAX_UPLOAD_BYTES:
        raise AnswerFileError([f"the file is {upload.size:,} bytes; at most {MAX_UPLOAD_BYTES:,}"])
    data = upload.read()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise AnswerFileError(
            [f"not UTF-8 text (byte {exc.start} cannot be read): save the sheet as CSV UTF-8"]
        ) from None
