"""A judge model belongs to one study (its team), as a System does (docs/teams.md).

Each existing judge model goes to the study that used it (a run or a call). One used by several studies is
split: the lowest-numbered study keeps the row, every other study gets a copy (same key and configuration)
and its runs and calls are repointed to that copy, so no team's history is changed or lost and none can
change what another's runs send. Judge models no study used stay without a study: superusers only.
"""

from django.db import migrations


def studies_that_used(apps, judge) -> list[int]:
    JudgeCall = apps.get_model("llm_judging", "JudgeCall")
    JudgingRun = apps.get_model("llm_judging", "JudgingRun")
    by_runs = JudgingRun.objects.filter(judges=judge).values_list("study_id", flat=True)
    by_calls = JudgeCall.objects.filter(judge=judge).values_list("cell__study_id", flat=True)
    return sorted(set(by_runs) | set(by_calls))


def split_by_study(apps, schema_editor):
    JudgeModel = apps.get_model("llm_judging", "JudgeModel")
    JudgeCall = apps.get_model("llm_judging", "JudgeCall")
    RunJudges = apps.get_model("llm_judging", "JudgingRun").judges.through
    for judge in list(JudgeModel.objects.order_by("pk")):
        studies = studies_that_used(apps, judge)
        if not studies:
            continue  # never used: no team to give it to; superusers see it
        JudgeModel.objects.filter(pk=judge.pk).update(study_id=studies[0])
        for study_id in studies[1:]:
            copy = JudgeModel.objects.create(
                study_id=study_id,
                key=judge.key,
                provider=judge.provider,
                model=judge.model,
                base_url=judge.base_url,
                api_key_env=judge.api_key_env,
                parameters=judge.parameters,
            )
            JudgeCall.objects.filter(judge=judge, cell__study_id=study_id).update(judge=copy)
            RunJudges.objects.filter(judgemodel=judge, judgingrun__study_id=study_id).update(judgemodel=copy)


def merge_copies(apps, schema_editor):
    """Backwards: one row per key again (the lowest pk), as before judge models had a study."""
    JudgeModel = apps.get_model("llm_judging", "JudgeModel")
    JudgeCall = apps.get_model("llm_judging", "JudgeCall")
    RunJudges = apps.get_model("llm_judging", "JudgingRun").judges.through
    for judge in list(JudgeModel.objects.order_by("pk")):
        copies = JudgeModel.objects.filter(key=judge.key, pk__gt=judge.pk)
        JudgeCall.objects.filter(judge__in=copies).update(judge=judge)
        RunJudges.objects.filter(judgemodel__in=copies).update(judgemodel=judge)
        copies.delete()


class Migration(migrations.Migration):
    dependencies = [("llm_judging", "0004_judge_model_belongs_to_a_study")]

    operations = [migrations.RunPython(split_by_study, merge_copies)]
