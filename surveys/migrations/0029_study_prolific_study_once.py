from django.db import migrations, models


class Migration(migrations.Migration):
    """A Prolific study belongs to one study (0028 unlinked the duplicates first; a separate migration so that
    PostgreSQL adds the index after the data migration's transaction)."""

    dependencies = [
        ("surveys", "0028_study_prolific_link"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name='study',
            constraint=models.UniqueConstraint(condition=models.Q(('prolific_study_id', ''), _negated=True), fields=('prolific_study_id',), name='study_prolific_study_once', violation_error_message='This Prolific study belongs to another study of this deployment.'),
        ),
    ]
