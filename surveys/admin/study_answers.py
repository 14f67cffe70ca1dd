"""The study admin's own pages: every system's answers side by side per vignette, and choosing the one judges see."""

from typing import TYPE_CHECKING

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from ..models import Answer, Study
from ..services.answer_records import select_answer
from ..services.authenticity import signs_in_words, summary
from ..services.authenticity_report import content_checks, counts_in_words

if TYPE_CHECKING:  # mixed into StudyAdmin: the ModelAdmin methods it calls are StudyAdmin's
    _Base = admin.ModelAdmin
else:
    _Base = object


class StudyAnswersPages(_Base):
    """Mixed into StudyAdmin: the answers page (admin:surveys_study_answers) and its select button."""

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
        study = get_object_or_404(self.get_queryset(request), pk=study_id)  # another team's: 404
        if not self.has_view_permission(request, study):
            raise PermissionDenied
        systems = list(study.systems.all())
        answers = (
            Answer.objects.for_study(study)
            .select_related("system", "vignette", "selected_by")
            .prefetch_related("features")
        )
        checks = content_checks(study)
        grid: dict[int, dict[int, list[Answer]]] = {}
        for answer in answers:
            answer.content_check = checks.get(answer.pk)
            answer.signal_totals = summary(answer.writing_signals) if answer.writing_signals else None
            answer.signal_signs = signs_in_words(answer.writing_signals)
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
            "authenticity_counts": counts_in_words(study),
            "authenticity_csv": reverse("analysis:export", args=[study.slug, "authenticity.csv"]),
            "can_select": study.status == Study.Status.DRAFT and self.has_change_permission(request, study),
        }
        return TemplateResponse(request, "admin/surveys/study_answers.html", context)

    def select_view(self, request, study_id: int, answer_id: int):
        study = get_object_or_404(self.get_queryset(request), pk=study_id)
        answer = get_object_or_404(Answer, pk=answer_id, vignette__study=study)
        if request.method != "POST" or not self.has_change_permission(request, answer.vignette.study):
            return redirect("admin:surveys_study_answers", study_id)
        try:
            confirmed = request.POST.get("confirm_low_authenticity") == "yes"
            select_answer(answer=answer, user=request.user, confirm_low_authenticity=confirmed)
        except ValidationError as exc:
            self.message_user(request, " ".join(exc.messages), messages.ERROR)
        else:
            self.message_user(request, f"Selected {answer} for judging.", messages.SUCCESS)
        return redirect(reverse("admin:surveys_study_answers", args=[study_id]) + f"#vignette-{answer.vignette_id}")
