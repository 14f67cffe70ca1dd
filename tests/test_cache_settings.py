"""The snapshot cache's Redis (CACHE_REDIS_URL): a database of its own, so that clearing it keeps the queued tasks."""

import shutil

import pytest
import redis

from tests.llm_collect.conftest import OwnRedis
from tests.test_project import SETUP, run_python

LOCATIONS = SETUP + (
    "from django.conf import settings as s;"
    "print(s.CELERY_BROKER_URL, s.CACHES['snapshots']['BACKEND'].rsplit('.', 1)[1], s.CACHES['snapshots'].get('LOCATION'))"
)


def test_the_snapshot_cache_is_the_database_after_the_brokers_unless_its_own_is_set():
    assert run_python(LOCATIONS, DEBUG="1", REDIS_URL="redis://r:6379/3").stdout.split() == [
        "redis://r:6379/3",
        "RedisCache",
        "redis://r:6379/4",
    ]
    assert run_python(LOCATIONS, DEBUG="1", REDIS_URL="redis://r:6379").stdout.split()[2] == "redis://r:6379/1"
    own = run_python(LOCATIONS, DEBUG="1", REDIS_URL="redis://r:6379/3", CACHE_REDIS_URL="redis://c:6380/0")
    assert own.stdout.split()[2] == "redis://c:6380/0"
    assert run_python(LOCATIONS, DEBUG="1").stdout.split() == ["LocMemCache", "snapshots"]  # the quickstart: no broker


def test_a_broker_on_the_last_database_stops_startup_asking_for_the_caches_own():
    result = run_python(SETUP, DEBUG="1", REDIS_URL="redis://:secret-pw@r:6379/15")
    assert result.returncode != 0
    assert "CACHE_REDIS_URL must be set: REDIS_URL names database 15" in result.stderr
    assert "secret-pw" not in result.stderr
    assert (
        run_python(SETUP, DEBUG="1", REDIS_URL="redis://r:6379/15", CACHE_REDIS_URL="redis://r:6379/14").returncode == 0
    )


QUEUE_THEN_CLEAR = SETUP + (
    "from django.core.cache import caches; from moraljudge.celery import app;"
    "app.send_task('surveys.tasks.example', queue='waiting');"
    "cache = caches['snapshots']; cache.set('snapshot:x:head', 1); cache.clear();"
    "print(cache.get('snapshot:x:head'))"
)


@pytest.mark.skipif(not shutil.which("redis-server"), reason="needs redis-server")
def test_clearing_the_snapshot_cache_keeps_the_tasks_queued_on_the_broker():
    with OwnRedis() as server:  # a Redis of the test's own: the clear below empties whole databases
        broker = redis.Redis.from_url(server.url)  # database 0

        cleared = run_python(QUEUE_THEN_CLEAR, DEBUG="1", REDIS_URL=server.url)
        assert cleared.stdout.split() == ["None"], cleared.stderr
        assert broker.llen("waiting") == 1

        # The same clear() with the cache in the broker's database loses the task: why the cache has its own.
        broker.delete("waiting")
        shared = run_python(QUEUE_THEN_CLEAR, DEBUG="1", REDIS_URL=server.url, CACHE_REDIS_URL=server.url)
        assert shared.stdout.split() == ["None"], shared.stderr
        assert broker.llen("waiting") == 0
