"""Typed readers for the environment variables settings.py is made of.

Each reader parses strictly and names the variable in its error, so a typo in a deployment's
environment stops the process at start-up (ImproperlyConfigured) instead of quietly meaning something
else. An unset or empty variable means the default.
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from urllib.parse import urlsplit, urlunsplit

from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

TRUE_WORDS, FALSE_WORDS = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}
RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smh])\s*$")
RATE_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}
RATE_OFF_WORDS = {"off", "", "0", "none"}


def _raw(name: str) -> str:
    return os.environ.get(name, "").strip()


def env_str(name: str, default: str = "", *, choices: set[str] | None = None) -> str:
    value = _raw(name) or default
    if choices is not None and value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of {', '.join(sorted(choices))}.")
    return value


def env_bool(name: str, default: bool = False) -> bool:
    value = _raw(name).lower()
    if not value:
        return default
    if value not in TRUE_WORDS | FALSE_WORDS:
        # A typo such as `ture` must not quietly switch a safety setting off.
        raise ImproperlyConfigured(f"{name}={os.environ[name]!r} is not a yes/no value: use 1 or 0.")
    return value in TRUE_WORDS


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    value = _raw(name)
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number.") from None
    if (minimum is not None and number < minimum) or (maximum is not None and number > maximum):
        bounds = f"from {minimum}" if maximum is None else f"from {minimum} to {maximum}"
        raise ImproperlyConfigured(f"{name}={number} is out of range: use a whole number {bounds}.")
    return number


def env_decimal(name: str, default: str) -> Decimal:
    value = _raw(name) or default
    try:
        number = Decimal(value)
    except InvalidOperation:
        number = Decimal("NaN")
    if not number.is_finite() or number < 0:
        raise ImproperlyConfigured(f"{name}={value!r} is not an amount of money (e.g. 6.00).")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_crontab(name: str, default: str) -> crontab:
    """A five-field crontab (minute hour day-of-month month day-of-week), read by Celery's own parser."""
    value = _raw(name) or default
    try:
        return crontab.from_string(value)
    except (ValueError, TypeError) as error:
        raise ImproperlyConfigured(
            f"{name}={value!r} is not a five-field crontab (minute hour day month weekday): {error}."
        ) from None


def parse_rate(text: str) -> tuple[int, timedelta] | None:
    """ "3/10m" as (3, ten minutes); None for "off". Raises ValueError for anything else."""
    value = text.strip().lower()
    if value in RATE_OFF_WORDS:
        return None
    match = RATE.match(value)
    if not match:
        raise ValueError(f"{text!r} does not look like 3/10m (or off)")
    return int(match[1]), timedelta(seconds=int(match[2] or 1) * RATE_UNIT_SECONDS[match[3]])


def env_rate(name: str, default: str) -> str:
    """A rate such as 3/10m, checked now and kept as text (the services parse it with parse_rate)."""
    value = _raw(name) or default
    try:
        parse_rate(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} must look like 3/10m (or off).") from None
    return value


REDIS_DATABASES = 16  # Redis's default `databases`: numbers 0 to 15


def env_redis_after(name: str, url: str) -> str:
    """`name`'s Redis URL, else `url` with its database number plus one (empty when `url` is)."""
    value = _raw(name)
    if value or not url:
        return value
    parts = urlsplit(url)
    database = parts.path.strip("/") or "0"
    # The messages name no URL: it may hold a password.
    if parts.scheme not in ("redis", "rediss") or not database.isdigit():
        raise ImproperlyConfigured(f"{name} must be set: REDIS_URL names no Redis database number to follow.")
    following = int(database) + 1
    if following >= REDIS_DATABASES:
        raise ImproperlyConfigured(
            f"{name} must be set: REDIS_URL names database {database}, and the one after it is past Redis's last "
            f"({REDIS_DATABASES - 1}). Point {name} at another database (e.g. {int(database) - 1}) or another Redis."
        )
    return urlunsplit(parts._replace(path=f"/{following}"))
