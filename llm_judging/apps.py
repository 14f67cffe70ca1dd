from django.apps import AppConfig


class LlmJudgingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "llm_judging"
    verbose_name = "LLM judging"
