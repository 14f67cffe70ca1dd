import logging

from django.apps import AppConfig
from django.conf import settings


class SurveysConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "surveys"
    verbose_name = "Studies and surveys"

    def ready(self):
        # Said once at startup, so nobody wonders where the data went or why no worker is needed.
        log = logging.getLogger("moraljudge.startup")
        if not settings.DATABASE_URL:
            log.info(
                "DATABASE_URL is not set: using the embedded SQLite database %s", settings.DATABASES["default"]["NAME"]
            )
        if not settings.CELERY_BROKER_URL:
            log.info("REDIS_URL is not set: Celery tasks run in-process")
