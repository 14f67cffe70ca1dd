"""Output serializers of the results API (read-only; the API writes nothing but a queued refit)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from surveys.models import Question, Study, System

from .models import AnalysisRun
from .results import run_fields
from .schema import field_schema


@extend_schema_field(field_schema("systems"))
class SystemsAtFitField(serializers.JSONField):
    pass


@extend_schema_field(field_schema("results"))
class QuestionResultsField(serializers.JSONField):
    pass


@extend_schema_field(field_schema("halo"))
class HaloField(serializers.JSONField):
    pass


class SystemOut(serializers.ModelSerializer):
    class Meta:
        model = System
        fields = ["key", "label", "kind", "provider", "model"]


class QuestionOut(serializers.ModelSerializer):
    class Meta:
        model = Question
        fields = ["key", "text"]


class StudyOut(serializers.ModelSerializer):
    reference_system: serializers.SlugRelatedField = serializers.SlugRelatedField(slug_field="key", read_only=True)

    class Meta:
        model = Study
        fields = ["slug", "name", "status", "reference_system", "repetitions", "vignettes_per_participant"]


class StudyPageOut(serializers.Serializer):
    """One page of the study list (DRF's page-number pagination)."""

    count = serializers.IntegerField(help_text="Studies in all pages.")
    next = serializers.URLField(allow_null=True, help_text="The next page, or null on the last.")
    previous = serializers.URLField(allow_null=True, help_text="The previous page, or null on the first.")
    results = StudyOut(many=True)


class StudyDetailOut(StudyOut):
    systems = SystemOut(many=True, read_only=True)
    questions = QuestionOut(many=True, read_only=True)
    vignettes = serializers.SerializerMethodField()

    class Meta(StudyOut.Meta):
        fields = [*StudyOut.Meta.fields, "order_rule", "went_live_at", "closed_at", "systems", "questions", "vignettes"]

    def get_vignettes(self, study) -> list[str]:
        return list(study.vignettes.values_list("key", flat=True))


class CountOut(serializers.Serializer):
    label = serializers.CharField()  # type: ignore[assignment]  # a field named "label"; the stubs see Field.label
    count = serializers.IntegerField()


class StatusCountOut(CountOut):
    status = serializers.CharField()


class ExclusionCountOut(CountOut):
    reason = serializers.CharField()


class ProgressOut(serializers.Serializer):
    cells = serializers.IntegerField()
    target = serializers.IntegerField(help_text="Judgments wanted: sum of the cells' targets.")
    completed = serializers.IntegerField()
    reserved = serializers.IntegerField()
    percent_complete = serializers.FloatField()
    participants = serializers.IntegerField(help_text="Real participants (previews excluded).")
    valid_participants = serializers.IntegerField()
    by_status = StatusCountOut(many=True)
    exclusions = ExclusionCountOut(many=True)
    median_minutes = serializers.FloatField(allow_null=True, help_text="Median judging time of completed participants.")
    median_minutes_start_to_finish = serializers.FloatField(allow_null=True)


class AnalysisRunOut(serializers.ModelSerializer):
    """A finished run; systems, results and halo always in the current schema version (old runs upgraded)."""

    study: serializers.SlugRelatedField = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    parameters = serializers.JSONField(help_text="reference, order_effect, bootstrap, seed, split_halves, style.")
    schema_version = serializers.IntegerField(help_text="The shape of systems, results and halo below.")
    systems = SystemsAtFitField(help_text="Systems in item order, as they were at the fit.")
    results = QuestionResultsField(help_text="Per question key: every fit, interval and diagnostic of the question.")
    halo = HaloField(help_text="Correlations of the estimates between every two questions.")

    class Meta:
        model = AnalysisRun
        fields = [
            "id",
            "study",
            "trigger",
            "status",
            "created_at",
            "finished_at",
            "n_judgments",
            "n_participants",
            "data_hash",
            "git_revision",
            "parameters",
            "schema_version",
            "systems",
            "results",
            "halo",
        ]

    def to_representation(self, run):
        return super().to_representation(run) | run_fields(run.read_results())


class RefitOut(serializers.Serializer):
    queued = serializers.BooleanField(help_text="True: a worker will refit. False: no broker, it ran in the request.")
    study = serializers.CharField()
    run = serializers.IntegerField(allow_null=True, help_text="The stored run's id, when it ran at once.")
    detail = serializers.CharField(help_text="What happened, in a sentence for the researcher.")
