"""Study teams in the admin: every study-related ModelAdmin shows only its user's teams' rows and lets
viewers look but not act (the rules: surveys/services/teams.py)."""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import FieldDoesNotExist
from django.http import HttpResponseRedirect

from ..models import Study, StudyMembership
from ..services.teams import can_act, can_change_team, scoped, studies_for


def study_path_of(model) -> str | None:
    """How rows of `model` reach their study ("" for Study itself), or None when they belong to no study."""
    if model is Study:
        return ""
    for path in ("study", "vignette__study", "run__study", "question__study", "participant__study"):
        try:
            _follow_fields(model, path)
        except FieldDoesNotExist:
            continue
        return path
    return None


def _follow_fields(model, path: str) -> None:
    for name in path.split("__"):
        field = model._meta.get_field(name)
        if not (field.concrete and field.many_to_one):  # forward foreign keys only, never a reverse relation
            raise FieldDoesNotExist(name)
        model = field.related_model


def study_of(obj, path: str) -> Study:
    for name in filter(None, path.split("__")):
        obj = getattr(obj, name)
    return obj


def narrow_choices(field, user) -> None:
    """A form field choosing a study or a study's part offers only those of studies the user may act on."""
    queryset = getattr(field, "queryset", None)
    path = study_path_of(queryset.model) if queryset is not None else None
    if queryset is not None and path is not None:
        field.queryset = scoped(queryset, user, study_path=path or "pk", acting=True)


class TeamScoped(admin.ModelAdmin):
    """Mixed into a ModelAdmin whose rows belong to a study (`study_path` says how; "" for Study)."""

    study_path = "study"

    def get_queryset(self, request):
        return scoped(super().get_queryset(request), request.user, study_path=self.study_path or "pk")

    def _may_act(self, request, obj) -> bool:
        return obj is None or can_act(request.user, study_of(obj, self.study_path))

    def has_add_permission(self, request):
        # A study's row can only be added to a study the user may act on: with none, no "Add" button.
        return super().has_add_permission(request) and (self.study_path == "" or acts_on_a_study(request))

    def get_actions(self, request):
        # Every action changes a study or its rows: a user who may only view their studies is offered none.
        return super().get_actions(request) if acts_on_a_study(request) else {}

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._may_act(request, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._may_act(request, obj)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        field = super().formfield_for_foreignkey(db_field, request, **kwargs)
        if field is not None:
            narrow_choices(field, request.user)
        return field

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        field = super().formfield_for_manytomany(db_field, request, **kwargs)
        if field is not None:
            narrow_choices(field, request.user)
        return field

    def get_list_filter(self, request):
        # A study filter lists the studies present in this user's rows, never every study's name.
        return [
            (name, admin.RelatedOnlyFieldListFilter) if isinstance(name, str) and _names_a_study(name) else name
            for name in super().get_list_filter(request)
        ]

    def response_action(self, request, queryset):
        """Every admin action: refused whole, before anything is done, when a chosen row's study is one
        the user may only view (each action also declares its model permission: `permissions=[...]`)."""
        if request.POST.get("select_across") == "1":
            chosen = queryset
        else:
            chosen = queryset.filter(pk__in=request.POST.getlist(helpers.ACTION_CHECKBOX_NAME))
        acting = studies_for(request.user, acting=True)
        if request.POST.get("action") and chosen.exclude(**{f"{self.study_path or 'pk'}__in": acting}).exists():
            self.message_user(
                request,
                "Refused: some of the chosen rows belong to a study you may only view "
                "(its owners and researchers may do this). Nothing was done.",
                messages.ERROR,
            )
            return HttpResponseRedirect(request.get_full_path())
        return super().response_action(request, queryset)


def acts_on_a_study(request) -> bool:
    """Whether the user may act on any study (owner or researcher somewhere); asked once per request."""
    if not hasattr(request, "_acts_on_a_study"):
        request._acts_on_a_study = studies_for(request.user, acting=True).exists()
    return request._acts_on_a_study


def _names_a_study(name: str) -> bool:
    return name == "study" or name.endswith("__study") or name == "run"


class MembershipFormSet(forms.BaseInlineFormSet):
    def clean(self):
        super().clean()
        rows = [f for f in self.forms if f.cleaned_data]
        kept = [f for f in rows if not f.cleaned_data.get("DELETE")]
        # A study without a team (imported without --owner) may stay so; a team always keeps an owner.
        if rows and not any(f.cleaned_data.get("role") == StudyMembership.Role.OWNER for f in kept):
            raise forms.ValidationError("A study's team needs at least one owner: make someone else owner first.")


class MembershipInline(admin.TabularInline):
    """The study's team on its page: only its owners (and superusers) change roles or remove members; saved
    by StudyAdmin. Colleagues join through "Invite a colleague" (team_page.py), never by picking from a list
    of every staff account (which would show an owner the names of other teams' members)."""

    model = StudyMembership
    formset = MembershipFormSet
    extra = 0
    fields = ["user", "role", "added_at"]
    readonly_fields = ["user", "added_at"]
    verbose_name = "team member"
    verbose_name_plural = 'Team (owners change roles and remove members; add one with "Invite a colleague" above)'

    def _owner(self, request, obj) -> bool:
        return obj is not None and obj.pk is not None and can_change_team(request.user, obj)

    def has_add_permission(self, request, obj=None):
        return False  # through the invitation page: found or created, told, and audited as invited

    def has_change_permission(self, request, obj=None):
        return self._owner(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._owner(request, obj)

    def has_view_permission(self, request, obj=None):
        return True  # anyone who sees the study sees its team
