"""Studies with their parts inline, status changes and Prolific actions.

The parts' inlines are in study_parts.py, the form in study_form.py, the status and review actions in
study_actions.py, the answers-side-by-side pages in study_answers.py; the Prolific draft actions in
prolific_actions.py.
"""

from django import forms
from django.contrib import admin, messages
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import escape, format_html

from ..models import DEFAULT_ATTENTION_OPTIONS, AuditEvent, Study, StudyMembership, System
from ..prolific import POLICY_HELP
from ..prolific.eligibility import clean_eligibility
from ..prolific.ownership import is_changeable
from ..services.audit import record_event
from ..services.authenticity_report import counts_in_words
from ..services.design_warnings import design_warnings
from ..services.freezing import FROZEN_STUDY_FIELDS, StudyFrozen, check_editable, frozen_reason, is_frozen
from ..services.languages import interface_languages, language_warnings
from ..services.lifecycle import end_of_survey, launch_warnings, missing_for_live
from ..services.teams import can_act, remove_member, set_member
from .answer_import import AnswerImportPage
from .bonuses import StudyBonusPages, pay_bonuses_on_prolific
from .frozen import attempted_frozen_edits
from .prolific_actions import PROLIFIC_ACTIONS
from .study_actions import StudyActions
from .study_answers import StudyAnswersPages
from .study_form import ELIGIBILITY_FIELDS, StudyForm
from .study_links import StudyLinks
from .study_parts import QuestionInline, SystemInline, VignetteInline, method_questions
from .team_page import StudyTeamPage
from .teams import MembershipInline, TeamScoped


@admin.register(Study)
class StudyAdmin(
    TeamScoped,
    StudyLinks,
    StudyTeamPage,
    AnswerImportPage,
    StudyActions,
    StudyAnswersPages,
    StudyBonusPages,
    admin.ModelAdmin,
):
    study_path = ""  # the rows are the studies
    form = StudyForm
    list_display = ["name", "slug", "status", "reference_system", "repetitions", "vignettes_per_participant"]
    list_filter = ["status"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = ["status", "went_live_at", "closed_at", "readiness", "answers_link", "answers_to_look_at"]
    readonly_fields += ["prolific_link", "prolific_status", "prolific_synced_at"]
    inlines = [QuestionInline, VignetteInline, SystemInline, MembershipInline]
    actions = ["make_live", "make_closed", "copy_as_new_draft", "review_on_prolific", "reconcile_with_prolific"]
    actions += PROLIFIC_ACTIONS  # create or update the Prolific draft, publish it, add places
    actions += [pay_bonuses_on_prolific]  # to the study's bonuses page (bonuses.py)
    actions += ["remove_test_participants"]  # the researchers' own tries (study_links.py)
    fieldsets = [
        (None, {"fields": ["name", "slug", "description", "status", "readiness", "answers_link", "reference_system"]}),
        (
            "Design",
            {
                "fields": [
                    "repetitions",
                    "vignettes_per_participant",
                    "order_rule",
                    "answers_per_respondent",
                    "reservation_minutes",
                ]
            },
        ),
        ("Analysis", {"fields": ["bias_reduced"]}),
        (
            "Consent page and lab study",
            {
                "description": "What a research ethics committee asks participants be told (in other languages: "
                "translations, below); a lab study runs without Prolific.",
                "fields": ["researchers_contact", "ethics_reference", "data_retention", "lab_study"],
            },
        ),
        (
            "Quality and Prolific policy",
            {
                "description": POLICY_HELP,
                "fields": [
                    "minimum_seconds",
                    "fast_fraction_of_median",
                    "estimated_minutes",
                    "attention_prompt",
                    "attention_options",
                    "invalid_policy",
                    "prolific_study_id",
                    "prolific_link",
                    "completion_code",
                    "failed_attention_code",
                    "no_consent_code",
                    "screened_out_code",
                ],
            },
        ),
        (
            "Prolific study from the admin",
            {
                "description": "Used by the actions 'Create or update Prolific draft', 'Publish on Prolific' and "
                "'Add places on Prolific'; each shows what it would send before sending it.",
                "fields": [
                    "prolific_currency",
                    "prolific_hourly_rate",
                    "prolific_margin_percent",
                    "prolific_status",
                    "prolific_synced_at",
                ],
            },
        ),
        (
            "Who may take part on Prolific",
            {
                "description": "Sent as the Prolific draft's filters by 'Create or update Prolific draft' (its "
                "confirmation page lists them); change them while the Prolific study is a draft.",
                "fields": list(ELIGIBILITY_FIELDS),
            },
        ),
        (
            "Answer writing on Prolific (/r/)",
            {
                "description": "The answer-writing survey's own completion codes, separate from judging's.",
                "fields": ["answering_completion_code", "answering_no_consent_code", "answering_full_code"],
            },
        ),
        # The participants' language; texts in other languages are JSON by language code (docs/study-files.md).
        ("Language", {"fields": ["language", "translations"]}),
        ("LLM instrument", {"classes": ["collapse"], "fields": ["system_prompt", "user_prompt"]}),
        ("History", {"classes": ["collapse"], "fields": ["went_live_at", "closed_at"]}),
    ]

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if obj is None or not is_changeable(obj):  # linked after saving; never changed once live
            readonly.append("prolific_study_id")
        return readonly + [name for name in FROZEN_STUDY_FIELDS if name not in readonly] if is_frozen(obj) else readonly

    def get_prepopulated_fields(self, request, obj=None):
        return {} if is_frozen(obj) else super().get_prepopulated_fields(request, obj)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        study = self.get_object(request, object_id)
        if study is not None and is_frozen(study) and request.method == "POST":
            try:
                check_editable(study, attempted_frozen_edits(request, study, self.inlines))
            except StudyFrozen as exc:  # refused whole, with the reason: nothing of this POST is saved
                self.message_user(request, " ".join(exc.messages), messages.ERROR)
                return redirect(request.path)
        if study is not None and is_frozen(study) and request.method == "GET" and can_act(request.user, study):
            # say why the fields are read-only (to a viewer every field is, frozen or not: nothing to explain)
            self.message_user(request, frozen_reason(study), messages.WARNING)
        return super().change_view(request, object_id, form_url, extra_context)

    def save_model(self, request, obj, form, change):
        if change:  # the read-only fields are not on the form; this refuses anything that slips past
            check_editable(Study.objects.get(pk=obj.pk), form.changed_data)
        super().save_model(request, obj, form, change)
        if change and "prolific_study_id" in form.changed_data:
            after = obj.prolific_study_id
            before = form.initial.get("prolific_study_id", "")
            record_event(
                action=AuditEvent.Action.PROLIFIC_LINKED,
                user=request.user,
                study=obj,
                before=before,
                after=after,
                how=obj.prolific_link,
            )
        if not change:  # whoever creates a study owns it (docs/teams.md)
            set_member(study=obj, user=request.user, role=StudyMembership.Role.OWNER, by=request.user)

    def save_formset(self, request, form, formset, change):
        if formset.model is not StudyMembership:
            return super().save_formset(request, form, formset, change)
        # The team changes through the service: each change audited, the last owner kept.
        study = form.instance
        for member in formset.save(commit=False):  # role changes (members join through the invitation page)
            set_member(study=study, user=member.user, role=member.role, by=request.user)
        for gone in formset.deleted_objects:
            remove_member(study=study, user=gone.user, by=request.user)
        return None

    def construct_change_message(self, request, form, formsets, add=False):
        # The change history (who, when: Django's LogEntry) also says what each changed field was before.
        message = super().construct_change_message(request, form, formsets, add)
        if add or not form.changed_data:
            return message
        fields = [
            f"{form.fields[name].label or name} ({form.initial.get(name)!r} → {form.cleaned_data.get(name)!r})"
            for name in form.changed_data
        ]
        return [{"changed": {"fields": fields}}] + [
            item for item in message if "changed" not in item or item["changed"].get("object")
        ]

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if obj is not None and obj.pk and not self._may_collect(request, obj):  # no link to what they may not do
            look = [("answers_to_look_at" if f == "answers_link" else f) for f in fieldsets[0][1]["fields"]]
            fieldsets = [(fieldsets[0][0], {**fieldsets[0][1], "fields": look}), *fieldsets[1:]]
        if not self._names_reference_by_key(obj):
            return fieldsets
        (name, options), *rest = fieldsets
        fields = ["reference_key" if field == "reference_system" else field for field in options["fields"]]
        description = (
            "A new study starts with the method's five questions and its attention check, below: edit them, "
            "or clear a question's key and text to leave it out."
            if obj is None
            else None
        )
        return [(name, {**options, "fields": fields, "description": description}), *rest]

    @staticmethod
    def _names_reference_by_key(study: Study | None) -> bool:
        # Until the study has systems there is nothing to pick from a list.
        return study is None or (not is_frozen(study) and not study.systems.exists())

    def get_changeform_initial_data(self, request):
        # The attention check's options shown as they will be asked (the default ones are translated).
        return {"attention_options": DEFAULT_ATTENTION_OPTIONS, **super().get_changeform_initial_data(request)}

    def get_formset_kwargs(self, request, obj, inline, prefix):
        kwargs = super().get_formset_kwargs(request, obj, inline, prefix)
        if isinstance(inline, QuestionInline) and obj.pk is None:
            kwargs["initial"] = method_questions()
        return kwargs

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        key = form.cleaned_data.get("reference_key")
        if key:  # checked against the systems rows by the form: they are saved now
            study = form.instance
            study.reference_system = study.systems.get(key=key)
            study.save(update_fields=["reference_system"])
        if not change or "language" in form.changed_data:  # said where the language is chosen, once it is saved
            for warning in language_warnings(form.instance):
                self.message_user(request, f"Language: {warning}.", messages.WARNING)

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change, **kwargs)
        if "reference_system" in form.base_fields:
            systems = System.objects.filter(study=obj) if obj else System.objects.none()
            reference = form.base_fields["reference_system"]
            assert isinstance(reference, forms.ModelChoiceField)
            reference.queryset = systems
        if "language" in form.base_fields:
            language = form.base_fields["language"]
            said = [f"Interface translations ship for: {', '.join(interface_languages())}."]
            said += [f"Now: {warning}." for warning in (language_warnings(obj) if obj else [])]
            language.help_text = f"{language.help_text} {escape(' '.join(said))}"  # help text is shown unescaped
        return form

    @admin.display(description="Ready to go live?")
    def readiness(self, study: Study) -> str:
        if study.pk is None or study.status != Study.Status.DRAFT:
            return "—"
        problems = missing_for_live(study)
        warnings = [*launch_warnings(study), *design_warnings(study), *language_warnings(study)]
        notes = "".join(f" Note: {warning}." for warning in warnings)
        ready = "Yes." if not problems else "Missing: " + "; ".join(problems) + "."
        return f"{ready}{notes} At the end: {end_of_survey(study)}."

    @staticmethod
    def _may_collect(request, study: Study) -> bool:
        return request.user.has_perm("llm_collect.add_collectionrun") and can_act(request.user, study)

    @admin.display(description="Answers")
    def answers_link(self, study: Study) -> str:
        if study.pk is None:
            return "—"
        # By URL name: surveys does not import llm_collect or analysis.
        collect = reverse("admin:llm_collect_collectionrun_start") + f"?study={study.pk}"
        return self._answer_links(study, format_html(' · <a href="{}">Collect LLM answers</a>', collect))

    @admin.display(description="Answers")
    def answers_to_look_at(self, study: Study) -> str:
        """The answers' links for a user who may not collect LLM answers for the study (a viewer)."""
        return self._answer_links(study, "")

    @staticmethod
    def _answer_links(study: Study, collect: str) -> str:
        return format_html(
            '<a href="{}">All answers, side by side per vignette</a>{} · <a href="{}">Dashboard</a>'
            "<br>Authenticity of answers written in the survey: {}",
            reverse("admin:surveys_study_answers", args=[study.pk]),
            collect,
            reverse("analysis:study", args=[study.slug]),
            counts_in_words(study),
        )


def _eligibility_shown(name: str, label: str):
    """What a viewer (read-only page) sees for one eligibility field: the form fields are not model fields."""

    @admin.display(description=label)
    def shown(self, study: Study) -> str:
        value = clean_eligibility(study.prolific_eligibility).get(name.removeprefix("eligibility_"))
        if isinstance(value, list):
            return ", ".join(value)
        return "yes" if value is True else ("—" if value is None else str(value))

    return shown


for _name in ELIGIBILITY_FIELDS:
    setattr(StudyAdmin, _name, _eligibility_shown(_name, str(StudyForm.base_fields[_name].label)))
