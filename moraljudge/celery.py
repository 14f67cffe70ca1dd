"""The Celery app. Tasks live in each app's tasks.py (and surveys/prolific/tasks.py) and are found by autodiscovery.

Each kind of task has its own queue, so a lab can give LLM collection, Prolific calls and refits their own
workers (`celery -A moraljudge worker -Q refit` on a big machine, say); a worker started without `-Q`
consumes every queue.
"""

import os

from celery import Celery
from kombu import Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")

QUEUES = {
    "collection": "llm_collect.tasks.*",
    "prolific": "surveys.prolific.tasks.*",
    "refit": "analysis.tasks.*",
}
DEFAULT_QUEUE = "celery"  # everything else: the survey's reservation sweep

app = Celery("moraljudge")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_default_queue = DEFAULT_QUEUE
app.conf.task_queues = [Queue(DEFAULT_QUEUE), *(Queue(name) for name in QUEUES)]
app.conf.task_routes = {pattern: {"queue": name} for name, pattern in QUEUES.items()}
app.autodiscover_tasks()
app.autodiscover_tasks(["surveys.prolific"])  # surveys/prolific/tasks.py
