"""The Celery app. Tasks live in each app's tasks.py (and surveys/prolific_tasks.py) and are found by autodiscovery."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")

app = Celery("moraljudge")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(related_name="prolific_tasks")
