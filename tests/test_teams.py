"""Study teams and permissions on every action (issue 21, items 1 and 2).

Every registered admin action and custom admin view is walked as (a) a team viewer who holds every model
permission and (b) a team owner who holds view permissions only: each is refused and nothing in the
database changes. Every researcher URL of another team's study is walked as an outsider: 404 or 403.
"""

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.admin import helpers
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import RequestFactory
from django.urls import URLPattern, reverse

from analysis.models import AnalysisRun
from llm_collect.models import CollectionRun, Generation
from llm_judging.models import JudgeCall, JudgeModel, JudgingRun
from surveys.admin.teams import TeamScoped
from surveys.models import AuditEvent, Invitation, Study, StudyMembership
from surveys.services.teams import can_act, role_of, studies_for

from .analysis.conftest import broker_at
from .conftest import make_judged_study, make_study
from .surveys.test_admin_study_building import _form_data
from .test_researcher_surfaces import researcher_routes

APPS = ("surveys", "llm_collect", "llm_judging", "analysis")
STANDARD_VIEWS = ("_changelist", "_add", "_history", "_delete", "_change", "autocomplete")
Role = StudyMembership.Role


def staff(username: str, *, codenames=None):
    user = get_user_model().objects.create_user(username, password="pw-for-tests-1", is_staff=True)
    permissions = Permission.objects.filter(content_type__app_label__in=APPS)
    if codenames is not None:
        permissions = permissions.filter(codename__startswith=codenames)
    user.user_permissions.set(permissions)
    return user


@pytest.fixture
def their_study(db):
    """Another team's live study (s1, judged), a draft beside it, and a row of every kind an action acts on."""
    study = make_judged_study(slug="s1", participants=12)
    draft = make_study(slug="s1-draft")
    system, vignette = study.systems.first(), study.vignettes.first()
    Invitation.objects.create(study=study, system=system, label="Dr. Expert")
    run = CollectionRun.objects.create(study=study, samples=1)
    Generation.objects.create(run=run, system=system, vignette=vignette, status=Generation.Status.FAILED)
    judge = JudgeModel.objects.create(
        study=study, key="j", provider="openai", model="gpt-4o", api_key_env="OPENAI_API_KEY"
    )
    judging = JudgingRun.objects.create(study=study)
    cell = study.cells.first()
    JudgeCall.objects.create(
        run=judging, judge=judge, cell=cell, order="ab", first_answer=cell.answer_a, second_answer=cell.answer_b,
        status=JudgeCall.Status.FAILED,
    )  # fmt: skip
    return study, draft


def snapshot() -> dict:
    """Every row of the project's tables: what an action or view might change."""
    return {
        model._meta.label: list(model.objects.order_by("pk").values())
        for app in APPS
        for model in apps.get_app_config(app).get_models()
    }


def every_action():
    superuser = get_user_model()(is_staff=True, is_superuser=True, is_active=True)
    request = RequestFactory().get("/")
    request.user = superuser
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label in APPS:
            for name in model_admin.get_actions(request):  # "delete_selected" too, where deleting is allowed
                yield model, model_admin, name


def custom_views():
    """Each registered admin's own URLs, and its add view where the admin replaces Django's (by URL name)."""
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label not in APPS:
            continue
        replaced_add = type(model_admin).add_view is not admin.ModelAdmin.add_view
        for pattern in model_admin.get_urls():
            name = getattr(pattern, "name", None) or ""
            if (
                name
                and isinstance(pattern, URLPattern)
                and (not name.endswith(STANDARD_VIEWS) or (replaced_add and name.endswith("_add")))
            ):
                yield name


def arguments_for(name: str, study: Study) -> list:
    if "answer" in name and "select" in name:
        return [study.pk, study.vignettes.first().answers.first().pk]
    if name == "surveys_study_pay_bonuses":
        return [study.pk, 1]  # refused before the payment is looked up
    return (
        [study.pk]
        if "study_answers" in name or "import_answers" in name or "study_bonuses" in name or name.endswith("_invite")
        else []
    )


@pytest.fixture(
    params=[
        "viewer with every model permission",
        "viewer with every model permission, researcher of another study",
        "owner with view permissions only",
    ]
)
def refused_user(request, their_study, client):
    study, draft = their_study
    if request.param.startswith("viewer"):
        user, role = staff("viewer"), Role.VIEWER
    else:
        user, role = staff("looker", codenames="view_"), Role.OWNER
    for each in (study, draft):
        StudyMembership.objects.create(study=each, user=user, role=role)
    if request.param.endswith("another study"):  # offered the actions (for that study), refused them on these
        StudyMembership.objects.create(study=make_study(slug="elsewhere"), user=user, role=Role.RESEARCHER)
    client.force_login(user)
    return client, user, request.param


@pytest.mark.django_db
def test_every_admin_action_refuses_a_view_only_user_and_changes_nothing(refused_user, settings):
    client, _, kind = refused_user
    settings.PROLIFIC_API_TOKEN = "token-that-must-never-be-used"
    walked = 0
    for model, model_admin, name in every_action():
        pks = [str(pk) for pk in model.objects.values_list("pk", flat=True)]
        if not pks:
            continue
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        before = snapshot()
        response = client.post(
            url, {"action": name, helpers.ACTION_CHECKBOX_NAME: pks, "index": 0, "confirmed": "yes", "post": "yes"}
        )
        assert response.status_code in (200, 302, 403), (name, response.status_code)
        assert snapshot() == before, f"{model_admin}.{name} changed something for a {kind}"
        if kind.endswith("another study"):
            said = " ".join(str(m) for m in response.wsgi_request._messages)
            assert "only view" in said, (name, said)
        elif kind.startswith("viewer") and isinstance(model_admin, TeamScoped):  # acts on no study: offered none
            assert 'name="action"' not in client.get(url).content.decode(), name
        walked += 1
    assert walked >= 15  # go live, close, copy, Prolific ×5, exclude, revoke ×2, ask again, deletes, …


@pytest.mark.django_db
def test_every_custom_admin_view_refuses_a_view_only_user_and_changes_nothing(refused_user, their_study):
    client, _, kind = refused_user
    study, _ = their_study
    walked = set()
    for name in custom_views():
        url = reverse(f"admin:{name}", args=arguments_for(name, study))
        before = snapshot()
        client.get(url)
        response = client.post(url, {"study": study.pk, "judges": JudgeModel.objects.first().pk, "samples": 1,
                                     "orders": "both", "systems": ""})  # fmt: skip
        assert response.status_code in (200, 302, 403), (name, response.status_code)
        page = response.content.decode()
        if name == "surveys_study_answers":  # a page to look at: shown, without its select buttons
            assert "/select/" not in page, name
        elif response.status_code == 200:  # the form again, with the study refused as a choice
            assert "Select a valid choice" in page, name
        assert snapshot() == before, f"{name} changed something for a {kind}"
        walked.add(name)
    wanted = {"llm_collect_collectionrun_start", "llm_judging_judgingrun_add", "surveys_study_answers"}
    wanted |= {"surveys_study_import_answers", "surveys_study_bonuses", "surveys_study_pay_bonuses"}
    wanted |= {"surveys_study_invite"}
    assert wanted | {"surveys_study_select_answer"} <= walked


@pytest.mark.django_db
def test_judge_with_llms_refuses_staff_without_the_add_permission(their_study, client):
    study, _ = their_study
    user = staff("nobody", codenames="nothing-at-all")
    StudyMembership.objects.create(study=study, user=user, role=Role.OWNER)
    client.force_login(user)
    before = snapshot()
    form = {"study": study.pk, "judges": JudgeModel.objects.first().pk, "samples": 1, "orders": "both"}
    assert client.post(reverse("admin:llm_judging_judgingrun_add"), form).status_code == 403
    assert snapshot() == before


@pytest.fixture
def outsider(their_study, client):
    """A staff user with every model permission, owner of their own study only."""
    user = staff("outsider")
    mine = make_study(slug="mine")
    StudyMembership.objects.create(study=mine, user=user, role=Role.OWNER)
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_an_outsider_gets_404_or_403_on_every_researcher_url_of_another_teams_study(outsider):
    walked = 0
    for url in researcher_routes():
        if url.startswith("/admin/") or "/s1/" not in url:
            continue
        for method in (outsider.get, outsider.post):
            response = method(url)
            assert response.status_code in (403, 404, 405), f"{url} answered {response.status_code}"
        walked += 1
    assert walked >= 12  # dashboard, refit, power, plots, exports, LLM judges (page, exports, plots), the API


@pytest.mark.django_db
@pytest.mark.usefixtures("their_study")
def test_an_outsider_sees_no_row_name_or_choice_of_another_teams_study_in_the_admin(outsider):
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label not in APPS:
            continue
        info = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        page = outsider.get(reverse(f"{info}_changelist")).content.decode()
        assert "Study s1" not in page, model
        assert "s1-draft" not in page, model
        if model_admin.has_add_permission(outsider.get("/").wsgi_request) and model is not JudgingRun:
            add = outsider.get(reverse(f"{info}_add"))
            assert "Study s1" not in add.content.decode(), model
            assert "(s1)" not in add.content.decode(), model
        for pk in model.objects.values_list("pk", flat=True)[:3]:
            response = outsider.get(reverse(f"{info}_change", args=[pk]))
            mine = model_admin.get_queryset(response.wsgi_request).filter(pk=pk).exists()
            assert mine or response.status_code in (302, 404), (model, pk, response.status_code)
    assert "Study s1" not in outsider.get("/dashboard/").content.decode()
    assert outsider.get("/api/studies/").json()["count"] == 1


@pytest.mark.django_db
def test_roles_decide_who_sees_and_who_acts(their_study):
    study, draft = their_study
    viewer, researcher, stranger = staff("v"), staff("r"), staff("x")
    StudyMembership.objects.create(study=study, user=viewer, role=Role.VIEWER)
    StudyMembership.objects.create(study=study, user=researcher, role=Role.RESEARCHER)
    boss = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw-for-tests-1")
    assert list(studies_for(viewer)) == [study]
    assert not studies_for(viewer, acting=True).exists()
    assert list(studies_for(researcher, acting=True)) == [study]
    assert not studies_for(stranger).exists()
    assert set(studies_for(boss)) == {study, draft}
    assert role_of(boss, draft) == Role.OWNER
    assert (can_act(viewer, study), can_act(researcher, study), can_act(stranger, study)) == (False, True, False)
    participant_like = get_user_model().objects.create_user("judge", password="pw-for-tests-1")
    StudyMembership.objects.create(study=study, user=participant_like, role=Role.OWNER)
    assert not studies_for(participant_like).exists()  # not staff: no researcher surface at all


@pytest.mark.django_db
def test_the_creator_of_a_study_in_the_admin_owns_it_and_the_team_change_is_audited(client):
    creator = staff("creator")
    client.force_login(creator)
    _, form = _form_data(client, reverse("admin:surveys_study_add"))
    form.update({"name": "Mine", "slug": "mine"})
    response = client.post(reverse("admin:surveys_study_add"), form)
    assert response.status_code == 302, response.content.decode()[:3000]
    study = Study.objects.get(slug="mine")
    assert role_of(creator, study) == Role.OWNER
    event = AuditEvent.objects.get(action=AuditEvent.Action.TEAM_CHANGED)
    assert (event.username, event.details["member"], event.details["role"]) == ("creator", "creator", "owner")


@pytest.mark.django_db
def test_a_viewer_reads_the_dashboard_and_the_api_but_may_not_refit(their_study, client):
    from rest_framework.test import APIClient

    from analysis.models import AnalysisRun

    study, _ = their_study
    viewer = staff("viewer")
    StudyMembership.objects.create(study=study, user=viewer, role=Role.VIEWER)
    client.force_login(viewer)
    assert client.get("/dashboard/s1/").status_code == 200
    assert client.post("/dashboard/s1/refit/").status_code == 403
    api = APIClient()
    api.force_authenticate(viewer)
    assert api.get("/api/studies/s1/").status_code == 200
    assert api.post("/api/studies/s1/refit/").status_code == 403
    assert not AnalysisRun.objects.exists()


def researcher_pages(client, study: Study) -> dict[str, str]:
    """The pages where a study's buttons and links to act on it would be, as `client` sees them."""
    urls = {
        "dashboard": reverse("analysis:study", args=[study.slug]),
        "power": reverse("analysis:power", args=[study.slug]),
        "LLM judges": reverse("llm_judging:study", args=[study.slug]),
        "study page": reverse("admin:surveys_study_change", args=[study.pk]),
    }
    for model in (Study, CollectionRun, JudgingRun, Invitation, Generation, JudgeCall):
        urls[model._meta.model_name] = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    pages = {}
    for name, url in urls.items():
        response = client.get(url)
        assert response.status_code == 200, (name, response.status_code)
        pages[name] = response.content.decode()
    return pages


ACTING_MARKS = {
    "dashboard": ["Refit now", "/refit/"],
    "LLM judges": ["Judging runs → add"],
    "study page": ["Collect LLM answers", 'name="_save"', "Remove test participants"],
    "collectionrun": ["Collect answers for a study", 'name="action"'],
    "judgingrun": ["/admin/llm_judging/judgingrun/add/", 'name="action"'],
    "study": ['name="action"'],
    "invitation": ["/admin/surveys/invitation/add/", 'name="action"'],
    "generation": ['name="action"'],
    "judgecall": ['name="action"'],
}


@pytest.mark.django_db
def test_a_viewer_is_shown_no_button_link_or_action_for_what_only_owners_and_researchers_do(their_study, client):
    study, _ = their_study
    Participant = apps.get_model("surveys", "Participant")
    Participant.objects.filter(study=study).update(is_preview=True)  # tries, with the hint how to remove them
    viewer = staff("viewer")
    StudyMembership.objects.create(study=study, user=viewer, role=Role.VIEWER)
    client.force_login(viewer)
    pages = researcher_pages(client, study)
    for name, marks in ACTING_MARKS.items():
        for mark in marks:
            assert mark not in pages[name], (name, mark)
    assert "All answers, side by side per vignette" in pages["study page"]  # looking is still offered
    assert "Study s1" in pages["dashboard"] or study.name in pages["dashboard"]


@pytest.mark.django_db
def test_a_researcher_or_owner_is_shown_the_buttons_and_refit_now_works(their_study, client):
    study, _ = their_study
    for role in (Role.RESEARCHER, Role.OWNER):
        user = staff(role)
        StudyMembership.objects.create(study=study, user=user, role=role)
        client.force_login(user)
        pages = researcher_pages(client, study)
        for name, marks in ACTING_MARKS.items():
            for mark in marks:
                if mark != "Remove test participants":  # said only when the study has tries
                    assert mark in pages[name], (role, name, mark)
    with broker_at(None):  # no broker: the refit runs here
        page = client.post(reverse("analysis:refit", args=[study.slug]), follow=True).content.decode()
    run = AnalysisRun.objects.get()
    assert run.status == AnalysisRun.Status.DONE
    assert f"Refitted: run {run.pk}" in page


@pytest.mark.django_db
def test_judge_calls_stay_with_their_study_when_their_run_is_deleted(their_study, client):
    study, _ = their_study
    call = JudgeCall.objects.get()
    JudgingRun.objects.all().delete()  # the calls are kept (paid), without a run
    owner = staff("owner")
    StudyMembership.objects.create(study=study, user=owner, role=Role.OWNER)
    client.force_login(owner)
    assert client.get(reverse("admin:llm_judging_judgecall_change", args=[call.pk])).status_code == 200
    stranger = staff("stranger")
    client.force_login(stranger)
    assert client.get(reverse("admin:llm_judging_judgecall_change", args=[call.pk])).status_code in (302, 404)
