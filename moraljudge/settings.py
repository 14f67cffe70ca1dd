"""MoralJudge settings: the one settings file. Anything that changes per deploy comes from the environment."""

import os
from pathlib import Path

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off (see .env.example).")
    SECRET_KEY = "insecure-development-key-only-for-debug"
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
    "django_celery_beat",
    "surveys",
    "llm_collect",
    "analysis",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
DATABASE_URL = os.environ.get("DATABASE_URL", "")
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Many concurrent participants on SQLite wait for the write lock instead of failing at once.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = True
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
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if STATIC_MANIFEST
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = not STATIC_MANIFEST

LOGIN_URL = "/admin/login/"
SESSION_COOKIE_AGE = 60 * 60 * 24 * 14  # participants may come back to a study for two weeks
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
X_FRAME_OPTIONS = "DENY"

# Celery: a Redis broker when configured, otherwise tasks run in-process (laptop quickstart).
REDIS_URL = os.environ.get("REDIS_URL", "")
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", REDIS_URL)
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_TASK_TIME_LIMIT = int(os.environ.get("CELERY_TASK_TIME_LIMIT", "600"))
CELERY_TASK_ACKS_LATE = True  # safe: every task is idempotent
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_BEAT_SCHEDULE: dict = {}
# Analysis: refit every live study; REFIT_CRON is a five-field crontab (minute hour day month weekday).
REFIT_CRON = os.environ.get("REFIT_CRON", "30 2 * * *")
_refit_fields = REFIT_CRON.split()
if len(_refit_fields) != 5:
    raise ImproperlyConfigured(f"REFIT_CRON must have five crontab fields, not {REFIT_CRON!r}.")
CELERY_BEAT_SCHEDULE["analysis-refit-live-studies"] = {
    "task": "analysis.tasks.refit_live_studies",
    "schedule": crontab(
        **dict(zip(["minute", "hour", "day_of_month", "month_of_year", "day_of_week"], _refit_fields, strict=True))
    ),
}
# Judging survey: reopen the cells of participants whose reservations ran out.
CELERY_BEAT_SCHEDULE["surveys-release-expired"] = {
    "task": "surveys.tasks.release_expired_reservations",
    "schedule": 60.0,
}
# LLM collection: re-queue generations still pending after LLM_COLLECT["sweep_minutes"] or whose lease ran out.
CELERY_BEAT_SCHEDULE["llm-collect-sweep"] = {"task": "llm_collect.tasks.sweep", "schedule": 300.0}
# Per-provider limits shared by every worker through Redis; a System's parameters may override them.
LLM_RATE_LIMITS = {
    "default": {"requests_per_minute": 60, "burst": 1, "concurrency": 4},
    "openai": {"requests_per_minute": 500, "burst": 5, "concurrency": 8},
    "anthropic": {"requests_per_minute": 50, "burst": 1, "concurrency": 4},
    "gemini": {"requests_per_minute": 15, "burst": 1, "concurrency": 4},
    "openai-compatible": {"requests_per_minute": 60, "burst": 1, "concurrency": 4},
}
LLM_COLLECT = {"lease_seconds": 300, "max_attempts": 5, "max_invalid_attempts": 3, "sweep_minutes": 15}

# Prolific
PROLIFIC_API_TOKEN = os.environ.get("PROLIFIC_API_TOKEN", "")
PROLIFIC_API_URL = os.environ.get("PROLIFIC_API_URL", "https://api.prolific.com/api/v1/")
PROLIFIC_WEBHOOK_SECRET = os.environ.get("PROLIFIC_WEBHOOK_SECRET", "")
PROLIFIC_COMPLETION_URL = os.environ.get("PROLIFIC_COMPLETION_URL", "https://app.prolific.com/submissions/complete")
# Prolific: apply submission statuses from the submissions list, in case a webhook was missed.
CELERY_BEAT_SCHEDULE["prolific-reconcile-live-studies"] = {
    "task": "surveys.prolific_tasks.reconcile_live_studies",
    "schedule": 600.0,
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "MoralJudge API",
    "DESCRIPTION": "Studies, progress, results and exports of MoralJudge pairwise-judging studies.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAdminUser"],  # staff, like every researcher surface
}
# Two models have a `status` field with different choices: name their enums in the schema.
SPECTACULAR_SETTINGS.setdefault("ENUM_NAME_OVERRIDES", {}).update(
    {
        "StudyStatusEnum": "surveys.models.Study.Status",
        "AnalysisRunStatusEnum": "analysis.models.AnalysisRun.Status",
    }
)

LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")
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
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
