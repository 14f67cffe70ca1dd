"""Deployment defaults: what a server with DEBUG off refuses, HTTPS from the environment, the demo login,
the development .env, logging, queues per task kind and the read replica."""

import io
import json
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from .test_project import ROOT, SETUP, run_python

TLS = {
    "ALLOWED_HOSTS": "moraljudge.example.org",
    "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto",
    "SECURE_SSL_REDIRECT": "1",
    "SECURE_COOKIES": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
}


def a_real_key() -> str:
    return secrets.token_urlsafe(50)


def run_manage(*args: str, **env) -> subprocess.CompletedProcess:
    return run_python(f"import sys; sys.argv = ['manage.py', *{list(args)!r}]; exec(open('manage.py').read())", **env)


# ---------------------------------------------------------------- secret key and yes/no values


def test_without_debug_the_placeholder_key_from_the_example_file_is_refused_like_an_empty_one():
    result = run_python(SETUP, SECRET_KEY="change-me-to-a-long-random-string")
    assert result.returncode != 0
    assert "SECRET_KEY is still the placeholder from .env.example" in result.stderr
    assert run_python(SETUP, SECRET_KEY="change-me-to-a-long-random-string", DEBUG="1").returncode == 0


def test_a_yes_no_value_that_cannot_be_read_stops_startup_instead_of_reading_as_no():
    result = run_python(SETUP, SECRET_KEY=a_real_key(), SECURE_SSL_REDIRECT="ture")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SECURE_SSL_REDIRECT='ture' is not a yes/no value" in result.stderr
    spelled = SETUP + "from django.conf import settings as s; print(s.DEBUG, s.SECURE_SSL_REDIRECT)"
    assert run_python(spelled, DEBUG="Yes", SECURE_SSL_REDIRECT="off").stdout.split() == ["True", "False"]


def test_a_number_that_is_not_one_stops_startup_with_its_name():
    result = run_python(SETUP, SECRET_KEY=a_real_key(), SECURE_HSTS_SECONDS="a year")
    assert result.returncode != 0
    assert "SECURE_HSTS_SECONDS='a year' is not a whole number" in result.stderr


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("CELERY_TASK_TIME_LIMIT", "ten minutes", "CELERY_TASK_TIME_LIMIT='ten minutes' is not a whole number"),
        ("CELERY_TASK_TIME_LIMIT", "-5", "CELERY_TASK_TIME_LIMIT=-5 is out of range"),
        ("REFIT_CRON", "30 2 * *", "REFIT_CRON='30 2 * *' is not a five-field crontab"),
        ("REFIT_CRON", "99 2 * * *", "REFIT_CRON='99 2 * * *' is not a five-field crontab"),
        ("ENTRY_RATE_LIMIT", "three per ten", "ENTRY_RATE_LIMIT='three per ten' must look like 3/10m"),
        ("LOG_LEVEL", "LOUD", "LOG_LEVEL='LOUD' is not one of"),
        ("PROLIFIC_MINIMUM_HOURLY_GBP", "NaN", "PROLIFIC_MINIMUM_HOURLY_GBP='NaN' is not an amount of money"),
    ],
)
def test_every_setting_is_read_strictly_and_a_wrong_value_names_its_variable(variable, value, said):
    result = run_python(SETUP, SECRET_KEY=a_real_key(), **{variable: value})
    assert result.returncode != 0
    assert said in result.stderr


def test_the_nightly_refit_follows_refit_cron():
    shown = (
        SETUP
        + "from django.conf import settings as s; c = s.CELERY_BEAT_SCHEDULE['analysis-refit-live-studies']['schedule']; print(sorted(c.hour), sorted(c.minute), sorted(c.day_of_week))"
    )
    result = run_python(shown, SECRET_KEY=a_real_key(), REFIT_CRON="15 4 * * 1-5")
    assert result.stdout.split("\n")[0] == "[4] [15] [1, 2, 3, 4, 5]"


# ---------------------------------------------------------------- HTTPS


def test_check_deploy_is_clean_for_a_tls_deployment_configured_from_the_environment():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", SECRET_KEY=a_real_key(), **TLS)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_check_deploy_names_what_a_server_without_the_https_settings_lacks():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", SECRET_KEY=a_real_key())
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr


def test_behind_a_tls_proxy_plain_http_is_redirected_and_forwarded_https_is_served():
    code = SETUP + (
        "from django.test import Client;"
        "c = Client(); plain = c.get('/favicon.ico'); tls = c.get('/favicon.ico', headers={'x-forwarded-proto': 'https'});"
        "probe = c.get('/healthz');"
        "print(plain.status_code, plain.get('Location'), tls.status_code, probe.status_code,"
        " tls.get('Strict-Transport-Security'))"
    )
    result = run_python(code, SECRET_KEY=a_real_key(), **TLS | {"ALLOWED_HOSTS": "testserver"})
    assert result.returncode == 0, result.stderr
    plain, location, tls, probe, hsts = result.stdout.strip().split(maxsplit=4)
    assert (plain, location) == ("301", "https://testserver/favicon.ico")
    assert tls == "200"
    assert hsts.startswith("max-age=31536000;")
    assert probe == "200"  # the load balancer's plain-HTTP probe is not redirected


# ---------------------------------------------------------------- the demo login


@pytest.mark.django_db
def test_with_debug_off_the_demo_makes_no_superuser_with_a_published_password(settings):
    from django.contrib.auth import get_user_model

    settings.DEBUG = False
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert not get_user_model().objects.filter(username="researcher").exists()
    assert "No demo login was made (DEBUG is off)" in out.getvalue()
    assert "moraljudge-demo" not in out.getvalue()
    assert "/s/demo/?PROLIFIC_PID=" in out.getvalue()  # the study itself is loaded


@pytest.mark.django_db
def test_a_demo_server_asks_for_the_demo_login_explicitly(settings, client):
    settings.DEBUG = False
    call_command("load_demo", "--demo-login", "--password", "demo-pass-456", stdout=io.StringIO())
    assert client.login(username="researcher", password="demo-pass-456")


# ---------------------------------------------------------------- the development .env


def make(*targets: str, cwd: Path, **variables) -> subprocess.CompletedProcess:
    command = ["make", "--no-print-directory", "-f", str(ROOT / "Makefile"), *targets]
    command += [f"{name}={value}" for name, value in variables.items()]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=60)


def test_make_run_writes_a_development_env_once_and_the_settings_read_it(tmp_path):
    assert make(".env", cwd=tmp_path).returncode == 0
    written = (tmp_path / ".env").read_text()
    assert "DEBUG=1" in written.splitlines()
    key = next(line for line in written.splitlines() if line.startswith("SECRET_KEY=")).removeprefix("SECRET_KEY=")
    assert len(key) >= 50
    make(".env", cwd=tmp_path)
    assert (tmp_path / ".env").read_text() == written  # never overwritten: sessions and hashes keep their key
    code = SETUP + f"from django.conf import settings as s; print(s.DEBUG, s.SECRET_KEY == {key!r})"
    assert run_python(code, ENV_FILE=str(tmp_path / ".env")).stdout.split() == ["True", "True"]
    # The environment wins over the file: a server that says DEBUG=0 gets DEBUG off.
    code = SETUP + "from django.conf import settings as s; print(s.DEBUG)"
    assert run_python(code, ENV_FILE=str(tmp_path / ".env"), DEBUG="0").stdout.split() == ["False"]


def test_a_copied_example_file_does_not_let_a_server_start_with_the_placeholder_key(tmp_path):
    (tmp_path / ".env").write_text((ROOT / ".env.example").read_text())
    result = run_python(SETUP, ENV_FILE=str(tmp_path / ".env"))
    assert result.returncode != 0
    assert "placeholder" in result.stderr


def test_make_run_says_at_once_when_its_port_is_taken(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        # A virtualenv that cannot be made: had the check let make go on, it would fail there instead.
        result = make("run", cwd=tmp_path, PORT=port, VENV="/proc/no-venv-here")
        assert result.returncode != 0
        assert result.stderr.startswith(f"Port {port} on 127.0.0.1 is in use")
        assert "make run PORT=" in result.stderr
        assert not (tmp_path / ".env").exists()  # nothing else was started
    assert make("port-free", cwd=tmp_path, PORT=port).returncode == 0  # closed: free again


def test_the_readme_commands_import_and_export_a_study_with_the_checkout_venv(tmp_path):
    # What a researcher types after `make run`: the .env gives DEBUG and a key; here the database is a temporary file.
    (tmp_path / ".env").write_text(
        f"DEBUG=1\nSECRET_KEY={a_real_key()}\nDATABASE_URL=sqlite:///{tmp_path}/db.sqlite3\n"
    )
    env = {"ENV_FILE": str(tmp_path / ".env")}
    python = ROOT / ".venv" / "bin" / "python"
    python = python if python.exists() else Path(sys.executable)
    demo = ROOT / "surveys" / "demo" / "demo.study.json"
    for command in (f"{python} manage.py migrate -v 0", f"{python} manage.py import_study {demo}"):
        done = subprocess.run(command, shell=True, cwd=ROOT, env=run_env(env), capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    export = f"{python} manage.py export_study demo > {tmp_path}/exp2.json"
    done = subprocess.run(export, shell=True, cwd=ROOT, env=run_env(env), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "exp2.json").read_text())["slug"] == "demo"
    assert "not set" not in done.stderr  # the startup lines belong to the server, not to every command


def run_env(extra: dict) -> dict:
    import os

    from tests.test_project import SETTINGS_FROM_ENVIRONMENT as unset

    return {**{k: v for k, v in os.environ.items() if k not in unset}, **extra}


# ---------------------------------------------------------------- logging


def test_a_warning_is_logged_once_and_structured():
    code = SETUP + "from django.test import Client; Client().get('/no-such-page/')"
    result = run_python(code, DEBUG="1", ALLOWED_HOSTS="testserver")
    lines = [line for line in result.stderr.splitlines() if "Not Found: /no-such-page/" in line]
    assert lines == [lines[0]]
    assert lines[0].startswith("time=")
    assert "level=WARNING logger=django.request" in lines[0]


def test_the_embedded_backends_are_named_when_the_server_starts_and_not_before_a_command():
    started = run_python("import moraljudge.wsgi", DEBUG="1")
    said = [line for line in started.stderr.splitlines() if "is not set" in line]
    assert len(said) == 2
    assert "DATABASE_URL is not set: using the embedded SQLite database" in said[0]
    assert "REDIS_URL is not set: Celery tasks run in-process" in said[1]
    command = run_manage("check", DEBUG="1")
    assert command.returncode == 0
    assert "is not set" not in command.stderr
    assert "AXES" not in command.stderr
