from django.apps import AppConfig


class LlmCollectConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "llm_collect"
    verbose_name = "LLM answer collection"
