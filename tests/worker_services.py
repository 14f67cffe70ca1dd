"""Under pytest-xdist (`make test` runs two workers) every worker gets a Redis database of its own.

Worker gwN uses the database REDIS_URL names plus N (CI's REDIS_URL names db 14, so its two workers use 14 and
15): rate limiter keys and broker queues of one worker then never meet another's. The snapshot cache goes along:
without CACHE_REDIS_URL its default, the database after REDIS_URL's, would be the next worker's (and 16 for CI's
gw1, past Redis's last), so it shares its worker's database under its key prefix (the suite clears it by its keys,
tests/conftest.py); a CACHE_REDIS_URL that is set moves up by N like the others. tests/conftest.py calls this
first thing. The settings are loaded by then (pytest-django reads them before any conftest), so the settings and
the Celery app are moved along with the environment; the environment is moved so that the Celery workers and
commands a test starts as subprocesses use the same database. PostgreSQL needs nothing here: pytest-django gives
each worker a test database of its own (test_<name>_gwN).
"""

import os
from urllib.parse import urlsplit, urlunsplit

REDIS_VARIABLES = ("REDIS_URL", "CELERY_BROKER_URL", "CACHE_REDIS_URL")
# Set once the environment is moved: subprocesses inherit both it and PYTEST_XDIST_WORKER, and must not move again
# (CI's gw1 on db 15 became db 16, "DB index is out of range").
MOVED_MARK = "MJ_REDIS_MOVED_FOR_WORKER"


def worker_number() -> int | None:
    """N for xdist's worker gwN, None when the suite runs in one process."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(worker.removeprefix("gw")) if worker.startswith("gw") else None


def redis_url_for_worker(url: str, number: int) -> str:
    """`url` with its database (the path, 0 when absent) moved up by `number`; other brokers stay as they are."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        return url
    database = int(parts.path.strip("/") or 0) + number
    return urlunsplit(parts._replace(path=f"/{database}"))


def give_this_worker_its_own_redis_database() -> None:
    from django.conf import settings

    from moraljudge.celery import app

    number = worker_number()
    if number is None or os.environ.get(MOVED_MARK):
        return  # not under xdist, or a subprocess (a benchmark importing tests.conftest) whose environment is moved
    os.environ[MOVED_MARK] = "1"
    if not os.environ.get("CACHE_REDIS_URL") and settings.REDIS_URL:
        os.environ["CACHE_REDIS_URL"] = settings.CACHE_REDIS_URL = settings.REDIS_URL  # moved below
    for variable in REDIS_VARIABLES:
        if os.environ.get(variable):
            os.environ[variable] = redis_url_for_worker(os.environ[variable], number)
        if getattr(settings, variable, ""):
            setattr(settings, variable, redis_url_for_worker(getattr(settings, variable), number))
    for cache in settings.CACHES.values():  # two workers' studies share slugs
        if cache["BACKEND"].endswith("RedisCache"):
            cache["LOCATION"] = settings.CACHE_REDIS_URL
    if settings.CELERY_BROKER_URL:
        app.conf.broker_url = settings.CELERY_BROKER_URL
        app._pool = app.amqp._producer_pool = None  # pools keep the broker they were made for
