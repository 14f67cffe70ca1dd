"""Judge models belong to a study's team (issue 35), with the attack replayed: an outsider (staff, every model
permission, owner of a study of their own) tried to repoint another team's judge model that no run had used
yet, so that its first run would send that team's answers, with its key, to the outsider's server. Refused on
every path, and the judge model is not even seen: not in the changelist, a filter, a choice list or a search."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from llm_judging.models import JudgeCall, JudgeModel, JudgingRun
from llm_judging.services.runs import start_judging_run
from surveys.models import StudyMembership
from tests.conftest import make_judged_study, make_study
from tests.test_teams import snapshot, staff

pytestmark = pytest.mark.django_db
Role = StudyMembership.Role
VICTIM_URL = "https://llm.victim.example/v1"
FORM = {"provider": "openai", "model": "gpt-4o", "api_key_env": "OPENAI_API_KEY", "parameters": "{}"}


@pytest.fixture
def victims_judge(db):
    """Their live study's judge model, configured and not used by any run yet."""
    study = make_judged_study(slug="victim", participants=2)
    return JudgeModel.objects.create(
        study=study, key="their-judge", provider="openai", model="gpt-4o", base_url=VICTIM_URL,
        api_key_env="OPENAI_API_KEY",
    )  # fmt: skip


@pytest.fixture
def outsider(client, victims_judge):
    user = staff("outsider")
    StudyMembership.objects.create(study=make_judged_study(slug="mine", participants=2), user=user, role=Role.OWNER)
    client.force_login(user)
    return client


def change_url(judge: JudgeModel) -> str:
    return reverse("admin:llm_judging_judgemodel_change", args=[judge.pk])


def test_an_outsider_cannot_repoint_or_delete_another_teams_unused_judge_model(outsider, victims_judge):
    before = snapshot()
    repoint = {**FORM, "key": "their-judge", "base_url": "https://attacker.example/v1"}
    assert outsider.get(change_url(victims_judge)).status_code == 302  # "does not exist": back to the index
    assert outsider.post(change_url(victims_judge), repoint).status_code == 302
    delete = reverse("admin:llm_judging_judgemodel_delete", args=[victims_judge.pk])
    assert outsider.post(delete, {"post": "yes"}).status_code == 302
    # Nor by adding one to their study, or by a bulk action on the changelist.
    add = outsider.post(reverse("admin:llm_judging_judgemodel_add"), {**repoint, "study": victims_judge.study_id})
    assert add.status_code == 200
    assert "Select a valid choice" in add.content.decode()
    changelist = reverse("admin:llm_judging_judgemodel_changelist")
    outsider.post(changelist, {"action": "delete_selected", "_selected_action": [victims_judge.pk], "post": "yes"})
    assert snapshot() == before
    assert JudgeModel.objects.get(pk=victims_judge.pk).base_url == VICTIM_URL


def test_an_outsider_cannot_use_another_teams_judge_model_for_a_run_by_admin_service_or_command(
    outsider, victims_judge
):
    mine = JudgeModel.objects.create(study=make_study(slug="other-of-mine"), key="x", provider="openai", model="m")
    before = snapshot()
    mine_study = StudyMembership.objects.get(user__username="outsider").study
    form = {"study": mine_study.pk, "judges": [victims_judge.pk], "samples": 1, "orders": "one", "confirmed": "yes"}
    page = outsider.post(reverse("admin:llm_judging_judgingrun_add"), form).content.decode()
    assert "Select a valid choice" in page
    # A judge model of another study, even one of the user's own, is not this study's either.
    with pytest.raises(ValidationError, match="Not judge models of study 'mine': their-judge"):
        start_judging_run(study=mine_study, judges=[victims_judge])
    with pytest.raises(ValidationError, match="Not judge models of study 'mine': x"):
        start_judging_run(study=mine_study, judges=[mine])
    # The command names a judge within the study: the victim's key is not found from another study.
    with pytest.raises(CommandError, match="Study 'mine' has no judge model 'their-judge'"):
        call_command("judge_with_llm", "mine", "--judges", "their-judge")
    assert snapshot() == before
    assert not JudgingRun.objects.exists()


def test_an_outsider_sees_another_teams_judge_model_nowhere(outsider, victims_judge):
    mine = JudgeModel.objects.create(
        study=StudyMembership.objects.get(user__username="outsider").study, key="my-judge", provider="openai",
        model="gpt-4o",
    )  # fmt: skip
    cell = victims_judge.study.cells.first()
    JudgeCall.objects.create(judge=victims_judge, cell=cell, order="ab", first_answer=cell.answer_a,
                             second_answer=cell.answer_b)  # fmt: skip
    pages = {
        "judge models": reverse("admin:llm_judging_judgemodel_changelist"),
        "search": reverse("admin:llm_judging_judgemodel_changelist") + "?q=their",
        "judge calls (judge filter)": reverse("admin:llm_judging_judgecall_changelist"),
        "judge with LLMs (choices)": reverse("admin:llm_judging_judgingrun_add"),
        "autocomplete": reverse("admin:autocomplete")
        + "?app_label=llm_judging&model_name=judgingrun&field_name=judges&term=",
    }
    for name, url in pages.items():
        page = outsider.get(url).content.decode()
        assert "their-judge" not in page, name
        assert "victim.example" not in page, name
    assert "my-judge" in outsider.get(pages["judge models"]).content.decode()
    assert "my-judge (mine)" in outsider.get(pages["judge with LLMs (choices)"]).content.decode()
    assert mine.study.slug == "mine"


def test_a_viewer_of_the_team_reads_its_judge_model_and_a_researcher_changes_it(client, victims_judge):
    viewer, researcher = staff("viewer"), staff("researcher")
    StudyMembership.objects.create(study=victims_judge.study, user=viewer, role=Role.VIEWER)
    StudyMembership.objects.create(study=victims_judge.study, user=researcher, role=Role.RESEARCHER)
    edit = {**FORM, "key": "their-judge", "base_url": "", "model": "gpt-4o-mini"}
    client.force_login(viewer)
    page = client.get(change_url(victims_judge))
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert client.post(change_url(victims_judge), edit).status_code == 403
    assert not client.get(reverse("admin:llm_judging_judgemodel_changelist")).context["has_add_permission"]
    client.force_login(researcher)
    page = client.get(change_url(victims_judge)).content.decode()
    assert 'name="study"' not in page  # its study is fixed: moving it would hand its runs to another team
    assert client.post(change_url(victims_judge), edit).status_code == 302
    victims_judge.refresh_from_db()
    assert (victims_judge.model, victims_judge.study.slug) == ("gpt-4o-mini", "victim")


def test_a_researcher_adds_a_judge_model_only_to_a_study_they_act_on_and_keys_are_unique_per_study(
    client, victims_judge
):
    researcher = staff("researcher")
    StudyMembership.objects.create(study=victims_judge.study, user=researcher, role=Role.RESEARCHER)
    client.force_login(researcher)
    add = reverse("admin:llm_judging_judgemodel_add")
    no_study = client.post(add, {**FORM, "key": "new", "base_url": ""})
    assert "This field is required" in no_study.content.decode()
    taken = client.post(add, {**FORM, "key": "their-judge", "base_url": "", "study": victims_judge.study_id})
    assert "already has a judge model with this key" in taken.content.decode()
    assert client.post(add, {**FORM, "key": "new", "base_url": "", "study": victims_judge.study_id}).status_code == 302
    new = JudgeModel.objects.get(key="new")
    assert new.study == victims_judge.study
    renamed = client.post(change_url(new), {**FORM, "key": "their-judge", "base_url": ""})  # its study read only
    assert "already has a judge model with this key" in renamed.content.decode()


def test_a_judge_model_without_a_study_is_a_superusers_until_given_one(client, victims_judge):
    legacy = JudgeModel.objects.create(key="legacy", provider="openai", model="gpt-4o", api_key_env="OPENAI_API_KEY")
    owner = staff("owner")
    StudyMembership.objects.create(study=victims_judge.study, user=owner, role=Role.OWNER)
    client.force_login(owner)
    assert "legacy" not in client.get(reverse("admin:llm_judging_judgemodel_changelist")).content.decode()
    assert client.get(change_url(legacy)).status_code == 302
    with pytest.raises(ValidationError, match="Not judge models of study 'victim': legacy"):
        start_judging_run(study=victims_judge.study, judges=[legacy])  # a superuser gives it a study first
    boss = get_user_model().objects.create_superuser("boss", "boss@example.org", "pw-for-tests-1")
    client.force_login(boss)
    assert "legacy" in client.get(reverse("admin:llm_judging_judgemodel_changelist")).content.decode()
    given = {**FORM, "key": "legacy", "base_url": "", "study": victims_judge.study_id}
    assert client.post(change_url(legacy), given).status_code == 302
    legacy.refresh_from_db()
    assert legacy.study == victims_judge.study
    client.force_login(owner)
    assert client.get(change_url(legacy)).status_code == 200  # now the team's
