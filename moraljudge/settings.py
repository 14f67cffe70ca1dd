"""MoralJudge settings: the one settings file. Anything that changes per deploy comes from the environment."""

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from dotenv import load_dotenv
from kombu import Queue

from .env import env_bool, env_crontab, env_decimal, env_int, env_list, env_rate, env_redis_after, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

# A development convenience: `make run` writes .env once (DEBUG=1, a generated key), so every command the
# README shows works from the checkout. The environment always wins over the file; ENV_FILE= (empty) reads
# none (the test suite does so), and the Docker image holds no .env.
ENV_FILE = os.environ.get("ENV_FILE", str(BASE_DIR / ".env"))
if ENV_FILE:
    load_dotenv(ENV_FILE, override=False)

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
PLACEHOLDER_SECRET_KEY = "change-me-to-a-long-random-string"  # the value .env.example ships with
if not DEBUG and SECRET_KEY in {"", PLACEHOLDER_SECRET_KEY}:
    problem = "must be set" if not SECRET_KEY else "is still the placeholder from .env.example"
    raise ImproperlyConfigured(
        f"SECRET_KEY {problem} when DEBUG is off. Generate one with "
        "python3 -c 'import secrets; print(secrets.token_urlsafe(50))' (for development, `make run` writes a .env)."
    )
SECRET_KEY = SECRET_KEY or "insecure-development-key-only-for-debug"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from our static files, no CDN
    "django_celery_beat",
    "axes",
    "surveys",
    "llm_collect",
    "analysis",
    "llm_judging",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "moraljudge.control_characters.RefuseControlCharacters",  # a NUL in a link: 400 before any query
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # turns a locked-out login into the lockout page
]

ROOT_URLCONF = "moraljudge.urls"
WSGI_APPLICATION = "moraljudge.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: DATABASE_URL, or an SQLite file for a laptop quickstart.
DATABASE_URL = env_str("DATABASE_URL")
# A kept connection is checked before a request uses it, so a restarted or terminated
# database connection costs a reconnect, never a participant's page.
_db_options: dict[str, Any] = {"conn_max_age": env_int("DB_CONN_MAX_AGE", 60, minimum=0), "conn_health_checks": True}
DATABASES = {"default": dj_database_url.parse(DATABASE_URL or f"sqlite:///{BASE_DIR / 'db.sqlite3'}", **_db_options)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The quickstart's SQLite must hold a pilot (a class judging at once, benchmarks/pilot.py). SQLite has one
    # writer at a time; a transaction that reads first and writes later (most of ours) fails at once with
    # "database is locked" when another wrote meanwhile, however long the timeout. IMMEDIATE takes the write
    # lock at BEGIN, where the 30 s busy timeout does wait; WAL lets pages read while someone writes.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        transaction_mode="IMMEDIATE",
        timeout=30,
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    )
# PostgreSQL binds the parameters itself and keeps a statement a connection has run twice prepared, so
# the judging pages' few statements are planned once per connection, not on every request (PostgreSQL's
# CPU per judge about halves). DB_PREPARED_STATEMENTS=0 behind a pooler that cannot keep them.
DB_PREPARED_STATEMENTS = env_bool("DB_PREPARED_STATEMENTS", True)
_prepared = {"server_side_binding": True, "prepare_threshold": 2} if DB_PREPARED_STATEMENTS else {}
# A read replica for the heavy reads (refit, exports); unset, everything reads the one database.
DATABASE_REPLICA_URL = env_str("DATABASE_REPLICA_URL")
if DATABASE_REPLICA_URL:
    DATABASES["replica"] = dj_database_url.parse(DATABASE_REPLICA_URL, **_db_options)
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
    DATABASE_ROUTERS = ["moraljudge.replica.ReplicaRouter"]
for _database in DATABASES.values():
    if _database["ENGINE"] == "django.db.backends.postgresql":
        _database.setdefault("OPTIONS", {}).update(_prepared)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

# Login throttling (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one account from one address,
# that account is refused from that address for LOGIN_COOLOFF_MINUTES (axes' combination lockout): nobody
# elsewhere can lock the rightful user out of their own address. A burst from one address over any accounts is
# stopped after LOGIN_ADDRESS_FAILURE_LIMIT (moraljudge/login_throttle.py). Attempts live in the database, so
# every web process on every host sees them. Behind nginx set CLIENT_IP_HEADER (below), or every sign-in comes
# from nginx's address.
AUTHENTICATION_BACKENDS = [
    "moraljudge.login_throttle.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]  # the account from that address, together
LOGIN_ADDRESS_FAILURE_LIMIT = env_int("LOGIN_ADDRESS_FAILURE_LIMIT", 20, minimum=1)
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "admin/locked_out.html"
# Behind a proxy every request comes from the proxy's address: name the header it sets to the client's
# address (compose's nginx sets X-Real-IP) and how many proxies stand in front of the app (TRUSTED_PROXIES,
# 1 by default once a header is named). Only set these when clients cannot reach the app directly.
# One function reads them for every per-address limit: sign-in throttling and survey entry.
CLIENT_IP_HEADER = env_str("CLIENT_IP_HEADER")
TRUSTED_PROXIES = env_int("TRUSTED_PROXIES", 1 if CLIENT_IP_HEADER else 0, minimum=0)
AXES_CLIENT_IP_CALLABLE = "moraljudge.client_address.client_address"

# Survey entry: new participants (judging /s/, answer writing /r/) per client address, "N/<minutes>m"
# (or "N/<seconds>s", "N/<hours>h"); "off" for load tests and lab sessions where everyone shares one address.
ENTRY_RATE_LIMIT = env_rate("ENTRY_RATE_LIMIT", "3/10m")

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
# Participant pages speak their study's language (Study.language, activated per request in
# surveys/views/language.py); the interface is translated in locale/ (English and German so far).
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Hashed, compressed static files need `collectstatic` first (the Docker image runs it);
# development and the test suite serve the files straight from static/.
STATIC_MANIFEST = env_bool("STATIC_MANIFEST", not DEBUG)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "moraljudge.static_files.HashedStaticFiles"
        if STATIC_MANIFEST
        else "moraljudge.static_files.StaticFiles"
    },
}
WHITENOISE_USE_FINDERS = not STATIC_MANIFEST

LOGIN_URL = "/admin/login/"
# Mail: team invitations (docs/teams.md) go by e-mail over SMTP once EMAIL_HOST is set; without it nothing is
# sent and the inviting owner is shown the link to pass on.
EMAIL_HOST = env_str("EMAIL_HOST")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.dummy.EmailBackend"
)
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1, maximum=65535)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
EMAIL_TIMEOUT = 20  # seconds: an unreachable mail server fails the e-mail (the link is shown), not the page
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "MoralJudge <noreply@localhost>")
# Sessions live in the database, so any web process on any host serves any request (no sticky load balancing).
# Every host must share SECRET_KEY: it signs the sign-in hash kept in the session and the signed cookies.
SESSION_ENGINE = "django.contrib.sessions.backends.db"
SESSION_COOKIE_AGE = 60 * 60 * 24 * 14  # participants may come back to a study for two weeks
SESSION_COOKIE_HTTPONLY = True
# HTTPS (see README, Configuration): behind a TLS-terminating proxy, name the header it sets to "https".
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_PROXY_SSL_HEADER_NAME = env_str("SECURE_PROXY_SSL_HEADER")  # e.g. X-Forwarded-Proto
if SECURE_PROXY_SSL_HEADER_NAME:
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + SECURE_PROXY_SSL_HEADER_NAME.upper().replace("-", "_"), "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # load balancers probe over plain HTTP
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
X_FRAME_OPTIONS = "DENY"

# Celery: a Redis broker when configured, otherwise tasks run in-process (laptop quickstart).
REDIS_URL = env_str("REDIS_URL")
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL)
# The snapshot cache's Redis: by default the database after REDIS_URL's (redis://h:6379/0 -> /1), not the
# broker's: Django's RedisCache.clear() is a FLUSHDB, which would drop the queued tasks. CACHE_REDIS_URL may
# name another Redis (one with an eviction policy, say; the broker's must keep every message).
CACHE_REDIS_URL = env_redis_after("CACHE_REDIS_URL", REDIS_URL)
# "snapshots": what live studies show (surveys/services/snapshots.py), shared by every process and host through
# Redis when CACHE_REDIS_URL (or REDIS_URL) is set, else kept in each process's memory (the quickstart). Entries
# are keyed by the snapshot's id and never go stale. "rendered": page fragments rendered from a snapshot, in
# each process.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "snapshots": (
        {"BACKEND": "moraljudge.redis_cache.RedisCache", "LOCATION": CACHE_REDIS_URL, "KEY_PREFIX": "mj"}
        if CACHE_REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "snapshots"}
    ),
    "rendered": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "rendered",
        "OPTIONS": {"MAX_ENTRIES": 5000},
    },
}
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 600, minimum=10)
# At-least-once delivery: a message is acknowledged when its task has finished, and handed back to the broker
# when the worker process running it dies. Safe because every task is idempotent.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# On Redis, a worker takes a message only when a process is free to run it: a killed worker then holds no
# message it had not started, which would otherwise wait out the visibility timeout below.
CELERY_WORKER_DISABLE_PREFETCH = True
# Redis gives an unacknowledged message to another worker after this many seconds. It must outlast the longest
# task (the hard time limit) and the longest retry countdown (LLM_CALLS["max_countdown_seconds"]), or a
# running or waiting task would be handed out a second time. A killed worker's LLM calls do not wait for it:
# their rows' leases lapse within 30 s and the sweep below queues them again.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT + 60}
# A queue per kind of task, so that each kind can have workers of its own on hosts of its own (README, "Beyond
# one machine"): `celery -A moraljudge worker -Q refit`. A worker started without -Q consumes every queue listed
# here (compose's worker and `make worker` do); tests/test_project.py checks that every task reaches one.
COLLECTION_QUEUE = env_str("LLM_COLLECT_QUEUE", "collection")  # LLM calls: collection and LLM judges
CELERY_TASK_DEFAULT_QUEUE = "celery"  # the rest: the survey's reservation sweep
CELERY_TASK_ROUTES = {
    "llm_collect.tasks.*": {"queue": COLLECTION_QUEUE},
    "llm_judging.tasks.*": {"queue": COLLECTION_QUEUE},
    "surveys.prolific.tasks.*": {"queue": "prolific"},  # every task that calls Prolific's API
    "analysis.tasks.*": {"queue": "refit"},
}
CELERY_TASK_QUEUES = [
    Queue(name) for name in dict.fromkeys([CELERY_TASK_DEFAULT_QUEUE, COLLECTION_QUEUE, "prolific", "refit"])
]
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Every periodic task in one place. The nightly refit's time is REFIT_CRON, a five-field crontab
# (minute hour day month weekday) read by Celery's own parser.
CELERY_BEAT_SCHEDULE = {
    # Analysis: refit every live study.
    "analysis-refit-live-studies": {
        "task": "analysis.tasks.refit_live_studies",
        "schedule": env_crontab("REFIT_CRON", "30 2 * * *"),
    },
    # Judging survey: reopen the cells of participants whose reservations ran out.
    "surveys-release-expired": {"task": "surveys.tasks.release_expired_reservations", "schedule": 60.0},
    # LLM calls (collection and LLM judging share one mechanism, llm_collect/calls/): re-queue rows whose worker
    # died (lease lapsed, or a retry it held is overdue), whose message the broker refused, and those still
    # pending after LLM_CALLS["sweep_minutes"]. Often, so that such rows move on within a minute.
    "llm-collect-sweep": {"task": "llm_collect.tasks.sweep", "schedule": 15.0},
    "llm-judging-sweep": {"task": "llm_judging.tasks.sweep", "schedule": 15.0},
    # Prolific: apply submission statuses from the submissions list, in case a webhook was missed.
    "prolific-reconcile-live-studies": {"task": "surveys.prolific.tasks.reconcile_live_studies", "schedule": 600.0},
}
# Per-provider limits shared by every worker through Redis; a System's parameters may override them.
LLM_RATE_LIMITS = {
    "default": {"requests_per_minute": 60, "burst": 1, "concurrency": 4},
    "openai": {"requests_per_minute": 500, "burst": 5, "concurrency": 8},
    "anthropic": {"requests_per_minute": 50, "burst": 1, "concurrency": 4},
    "gemini": {"requests_per_minute": 15, "burst": 1, "concurrency": 4},
    "openai-compatible": {"requests_per_minute": 60, "burst": 1, "concurrency": 4},
}
LLM_CALLS = {  # over llm_collect/calls/config.py DEFAULTS
    "lease_seconds": 30,  # renewed every 10 s while a call runs
    "max_attempts": 5,
    "max_invalid_attempts": 3,
    "sweep_minutes": 15,
    "max_countdown_seconds": min(300, CELERY_TASK_TIME_LIMIT),  # under the visibility timeout above
    "max_provider_wait_seconds": 600,  # the longest Retry-After (or Gemini retryDelay) obeyed; "inf" included
    "queue": COLLECTION_QUEUE,  # collection and LLM judging tasks (CELERY_TASK_ROUTES sends them there too)
}
# Which environment variables a System or judge model may name as its api_key_env (names or fnmatch patterns;
# one of the project's own settings, SECRET_KEY say, never), and the hosts a key may be sent to besides the
# providers' own (".example.org" allows its subdomains; empty: the providers' own plus localhost/127.0.0.1).
LLM_KEY_VARIABLES = env_list(
    "LLM_KEY_VARIABLES",
    ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "DEEPSEEK_API_KEY", "*_API_KEY"],
)
LLM_ALLOWED_HOSTS = env_list("LLM_ALLOWED_HOSTS", [])

# Prolific
PROLIFIC_API_TOKEN = env_str("PROLIFIC_API_TOKEN")
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
PROLIFIC_WEBHOOK_SECRET = env_str("PROLIFIC_WEBHOOK_SECRET")
PROLIFIC_COMPLETION_URL = env_str("PROLIFIC_COMPLETION_URL", "https://app.prolific.com/submissions/complete")
# Prolific's pay per hour by workspace currency (researcher help, "Prolific's payment principles": at least
# £6.00 / $8.00, recommended £9.00 / $12.00). The admin's draft action warns below each; Prolific itself
# refuses a study below its minimum. Settings, because Prolific changes them now and then.
PROLIFIC_HOURLY_RATES = {
    "GBP": {
        "minimum": env_decimal("PROLIFIC_MINIMUM_HOURLY_GBP", "6.00"),
        "recommended": env_decimal("PROLIFIC_RECOMMENDED_HOURLY_GBP", "9.00"),
    },
    "USD": {
        "minimum": env_decimal("PROLIFIC_MINIMUM_HOURLY_USD", "8.00"),
        "recommended": env_decimal("PROLIFIC_RECOMMENDED_HOURLY_USD", "12.00"),
    },
}
# Prolific's service fee on every payment to participants (rewards and bonuses) and the VAT charged on that fee,
# in percent: the confirmation pages estimate what an action costs from them (Prolific's own figures are shown
# where its API gives them, as for bonuses). Your workspace's fee is on Prolific's pricing page and invoices.
PROLIFIC_FEE_PERCENT = env_decimal("PROLIFIC_FEE_PERCENT", "33.33")
PROLIFIC_VAT_PERCENT = env_decimal("PROLIFIC_VAT_PERCENT", "0")
# Expert invitations (/r/<slug>/invite/<token>/) cannot be opened this many days after they were issued; 0: never expire.
INVITATION_MAX_AGE_DAYS = env_int("INVITATION_MAX_AGE_DAYS", 30, minimum=0)
# A participant of a study with a Prolific study id that Prolific still does not list as a submission this
# many minutes after arriving is excluded ("no Prolific submission") by reconciliation, and its places reopen.
PROLIFIC_VERIFY_GRACE_MINUTES = env_int("PROLIFIC_VERIFY_GRACE_MINUTES", 30, minimum=0)

# Study files (import_study and any importer): refused before parsing above this many bytes, and when any list or
# object holds more than this many items (questions, systems, answers, features, ...). Positions are smallints.
STUDY_FILE_MAX_BYTES = env_int("STUDY_FILE_MAX_BYTES", 5 * 1024 * 1024, minimum=1024, maximum=100 * 1024 * 1024)
STUDY_FILE_MAX_ITEMS = env_int("STUDY_FILE_MAX_ITEMS", 1000, minimum=1, maximum=32767)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # List endpoints answer a page at a time ({count, next, previous, results}).
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
}
SPECTACULAR_SETTINGS: dict[str, Any] = {
    "TITLE": "MoralJudge API",
    "DESCRIPTION": "Studies, progress, results and exports of MoralJudge pairwise-judging studies.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAdminUser"],  # staff, like every researcher surface
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "analysis.schema.add_result_shapes",  # the typed run results' dataclasses as components
    ],
}
# Two models have a `status` field with different choices: name their enums in the schema.
SPECTACULAR_SETTINGS.setdefault("ENUM_NAME_OVERRIDES", {}).update(
    {
        "StudyStatusEnum": "surveys.models.Study.Status",
        "AnalysisRunStatusEnum": "analysis.models.AnalysisRun.Status",
    }
)

# The code revision each analysis run records; unset, `git rev-parse HEAD` in the checkout is asked.
GIT_REVISION = env_str("GIT_REVISION")

LOG_LEVEL = env_str("LOG_LEVEL", "INFO", choices={"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"})
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        # key=value lines: greppable by hand, parseable by log shippers.
        "structured": {
            "format": "time=%(asctime)s level=%(levelname)s logger=%(name)s msg=%(message)s",
        },
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "structured"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        # Django's own console handler would print each warning a second time, unstructured.
        "django": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
        "django.db.backends": {"level": "WARNING"},
        "axes": {"level": "WARNING"},  # its version banner would open every command; failures and lockouts stay
    },
}
