"""Judge model keys are unique per study (the command line names a judge within its study), and among those
without a study."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("llm_judging", "0005_judge_models_split_by_study")]

    operations = [
        migrations.AddConstraint(
            model_name="judgemodel",
            constraint=models.UniqueConstraint(
                fields=("study", "key"),
                name="judgemodel_key_once_per_study",
                violation_error_message="This study already has a judge model with this key.",
            ),
        ),
        migrations.AddConstraint(
            model_name="judgemodel",
            constraint=models.UniqueConstraint(
                condition=models.Q(("study__isnull", True)),
                fields=("key",),
                name="judgemodel_key_once_without_study",
                violation_error_message="A judge model without a study already has this key.",
            ),
        ),
    ]
