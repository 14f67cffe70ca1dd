"""Migrations 0004-0006: judge models made before they had a study go to the study that used them; one used by
several studies is split into a copy per study, with that study's runs and calls repointed to its copy."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from llm_judging.models import JudgeCall, JudgeModel, JudgingRun
from tests.conftest import make_judged_study, make_study

BEFORE = ("llm_judging", "0003_judgemodel_api_key_env_allowed")
AFTER = ("llm_judging", "0006_judge_model_key_once_per_study")


def migrate(target):
    executor = MigrationExecutor(connection)
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


@pytest.mark.django_db(transaction=True)
def test_a_judge_model_used_by_two_studies_becomes_one_per_study_and_an_unused_one_keeps_none():
    first, second = make_judged_study(slug="first", participants=2), make_judged_study(slug="second", participants=2)
    make_study(slug="untouched")
    try:
        old = migrate(BEFORE)
        OldJudge, OldRun, OldCall = (old.get_model("llm_judging", name) for name in ("JudgeModel", "JudgingRun",
                                                                                      "JudgeCall"))  # fmt: skip
        shared = OldJudge.objects.create(key="shared", provider="openai", model="gpt-4o", base_url="https://a.example",
                                         api_key_env="OPENAI_API_KEY", parameters={"temperature": 0})  # fmt: skip
        only_first = OldJudge.objects.create(key="only-first", provider="openai", model="gpt-4o")
        OldJudge.objects.create(key="unused", provider="openai", model="gpt-4o")
        for study, judges in ((first, [shared, only_first]), (second, [shared])):
            run = OldRun.objects.create(study_id=study.pk)
            run.judges.set(judges)
            for judge in judges:
                for cell in study.cells.all()[:2]:
                    OldCall.objects.create(run=run, judge=judge, cell_id=cell.pk, order="ab", status="done",
                                           first_answer_id=cell.answer_a_id, second_answer_id=cell.answer_b_id,
                                           picks={"q": "A"})  # fmt: skip
        migrate(AFTER)
    finally:
        MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())

    rows = {(j.key, j.study.slug if j.study else None) for j in JudgeModel.objects.select_related("study")}
    assert rows == {("shared", "first"), ("shared", "second"), ("only-first", "first"), ("unused", None)}
    original, copy = JudgeModel.objects.get(pk=shared.pk), JudgeModel.objects.get(key="shared", study=second)
    assert original.study == first  # the lowest-numbered study keeps the row
    assert (copy.provider, copy.model, copy.base_url, copy.api_key_env, copy.parameters) == (
        "openai", "gpt-4o", "https://a.example", "OPENAI_API_KEY", {"temperature": 0}
    )  # fmt: skip
    for study in (first, second):  # every run and call now names a judge model of its own study
        assert not JudgeCall.objects.filter(cell__study=study).exclude(judge__study=study).exists()
        assert not JudgingRun.objects.filter(study=study).exclude(judges__study=study).exists()
    assert JudgeCall.objects.filter(judge=copy).count() == 2
    assert JudgeCall.objects.filter(judge=original).count() == 2
    assert set(JudgingRun.objects.get(study=second).judges.all()) == {copy}
    assert JudgeCall.objects.filter(status="done").count() == 6  # nothing lost
