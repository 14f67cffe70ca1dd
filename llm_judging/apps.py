from django.apps import AppConfig


class LlmJudgingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "llm_judging"
    verbose_name = "LLM judging"

    def ready(self):
        # The power page (analysis) plans with the judges measured here; analysis never imports llm_judging,
        # so this app hands it the function that measures them.
        from analysis.services.measured_judges import provide_measurements

        from .services.planning import measured_on_study

        provide_measurements(measured_on_study)
