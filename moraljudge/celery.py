"""The Celery app. Tasks live in each app's tasks.py (and surveys/prolific/tasks.py) and are found by autodiscovery.

Queues and routes (a queue per kind of task) are settings: CELERY_TASK_ROUTES and CELERY_TASK_QUEUES.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")

app = Celery("moraljudge")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(["surveys.prolific"])  # surveys/prolific/tasks.py
