"""The WSGI application (gunicorn, runserver). Its import is the server's start: say which backends it uses."""

import logging
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")
application = get_wsgi_application()


def log_embedded_defaults() -> None:
    """Said once as the server starts (not before every command), so nobody wonders where the data went."""
    from django.conf import settings

    log = logging.getLogger("moraljudge.startup")
    if not settings.DATABASE_URL:
        log.info(
            "DATABASE_URL is not set: using the embedded SQLite database %s", settings.DATABASES["default"]["NAME"]
        )
    if not settings.CELERY_BROKER_URL:
        log.info("REDIS_URL is not set: Celery tasks run in-process")


log_embedded_defaults()
