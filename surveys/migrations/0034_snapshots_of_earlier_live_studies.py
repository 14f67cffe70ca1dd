"""Studies that went live (or closed) before migration 0031 get the snapshot going live now writes.

Their pages were still read from their rows; from here on every study past draft is shown from its snapshot.
The content is built here from the historical models, in the shape of services/snapshots.py's `content_for`
(its selected answers with their features), and not by calling it: the service uses the current models and
their managers (`for_study`, `selected`), which a migration must not count on, as they will change after it.
tests/surveys/test_snapshot_migration.py checks the two give the same content for the same study.
Reversing leaves the snapshots in place: they are what those studies' participants have been shown since.
"""

from django.db import migrations


def content_of(apps, study, using: str) -> dict:
    Question = apps.get_model("surveys", "Question")
    Vignette = apps.get_model("surveys", "Vignette")
    Answer = apps.get_model("surveys", "Answer")
    Feature = apps.get_model("surveys", "Feature")
    answers = list(Answer.objects.using(using).filter(vignette__study_id=study.pk, selected=True).order_by("pk"))
    features: dict[int, list[dict]] = {}
    shown = Feature.objects.using(using).filter(answer__in=[a.pk for a in answers]).order_by("answer_id", "position")
    for feature in shown:
        features.setdefault(feature.answer_id, []).append(
            {
                "id": feature.pk,
                "position": feature.position,
                "feature": feature.feature,
                "weight": feature.weight,
                "reason": feature.reason,
            }
        )
    return {
        "language": study.language,
        "questions": [
            {
                "id": q.pk,
                "key": q.key,
                "label": q.label,
                "text": q.text,
                "translations": q.translations,
                "position": q.position,
            }
            for q in Question.objects.using(using).filter(study_id=study.pk).order_by("position", "id")
        ],
        "vignettes": [
            {
                "id": v.pk,
                "key": v.key,
                "character": v.character,
                "text": v.text,
                "translations": v.translations,
                "position": v.position,
                "set": v.set,
                "source": v.source,
            }
            for v in Vignette.objects.using(using).filter(study_id=study.pk).order_by("position", "id")
        ],
        "answers": [
            {
                "id": a.pk,
                "system_id": a.system_id,
                "vignette_id": a.vignette_id,
                "sample": a.sample,
                "action": a.action,
                "additional_information": a.additional_information,
                "translations": a.translations,
                "features": features.get(a.pk, []),
            }
            for a in answers
        ],
    }


def write_missing_snapshots(apps, schema_editor):
    Study = apps.get_model("surveys", "Study")
    StudySnapshot = apps.get_model("surveys", "StudySnapshot")
    using = schema_editor.connection.alias
    for study in Study.objects.using(using).exclude(status="draft").filter(snapshot__isnull=True).order_by("pk"):
        snapshot = StudySnapshot.objects.using(using).create(
            study=study, kind="live", content=content_of(apps, study, using)
        )
        Study.objects.using(using).filter(pk=study.pk).update(snapshot=snapshot)


class Migration(migrations.Migration):

    dependencies = [
        ("surveys", "0033_bonus_constraint_messages"),
    ]

    operations = [
        migrations.RunPython(write_missing_snapshots, migrations.RunPython.noop),
    ]
