import importlib

from django.db import migrations, models

integrity = importlib.import_module("surveys.migrations.0011_study_integrity")


def drop_answer_triggers_on_sqlite(apps, schema_editor):
    # SQLite adds this column by rebuilding the vignette table, which 0011's answer triggers name: drop them
    # for the rebuild and put them back after it.
    if schema_editor.connection.vendor == "sqlite":
        integrity.drop_same_study_trigger(apps, schema_editor)


def restore_answer_triggers_on_sqlite(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        integrity.drop_same_study_trigger(apps, schema_editor)
        integrity.create_same_study_trigger(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("surveys", "0023_answer_authenticity"),
    ]

    operations = [
        migrations.RunPython(drop_answer_triggers_on_sqlite, restore_answer_triggers_on_sqlite),
        migrations.AddField(
            model_name="vignette",
            name="set",
            field=models.SlugField(
                blank=True,
                help_text="The set (kind) of vignette, e.g. “published” or “novel”: results are given per set and "
                "the sets compared. Empty for a study with one set.",
                max_length=64,
            ),
        ),
        migrations.RunPython(restore_answer_triggers_on_sqlite, drop_answer_triggers_on_sqlite),
    ]
