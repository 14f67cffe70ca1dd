"""Django's Redis cache with one Redis client per connection pool, not a new one for every call.

Django's `RedisCacheClient.get_client` builds a `redis.Redis` for each cache call; building one (its
response callbacks, ~700 Python calls) cost about half a /healthz request in CPU, and a judging page makes
two or three cache calls. A client is only a handle on its pool and is safe to share (redis-py documents
its clients as thread-safe), so one per pool serves every call; the pools are Django's own.
"""

from django.core.cache.backends import redis


class ReusedClient(redis.RedisCacheClient):
    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]  # (Django's own; not in django-stubs)
        clients = self.__dict__.setdefault("_clients", {})
        client = clients.get(id(pool))
        if client is None:
            client = clients[id(pool)] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class RedisCache(redis.RedisCache):
    """settings.CACHES' BACKEND for Redis (LOCATION and OPTIONS as Django's RedisCache)."""

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ReusedClient
