"""Issue 23.8: the commands README and docs/ show run as written.

Every `make TARGET` is a target of the Makefile; every `manage.py NAME …` names a real command whose
arguments its parser accepts; the safe ones (local, no network, no server) run for real on the demo.
`make worker` and `make beat` refuse clearly without a broker.
"""

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command, get_commands, load_command_class

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Commands run for real below: they touch only the test database and the files the docs ship.
SAFE = {"simulate_judges", "export_study", "import_study", "import_answers", "refit"}  # check --deploy wants production
PLACEHOLDER = re.compile(r"[…<>\[]|\b[A-Z][A-Z_]{2,}\b(?!=)")  # SLUG, FILE, <slug>, [--option], …: for the reader


def documented_lines() -> list[tuple[str, str]]:
    """(document, command line) for every line of a ```sh block and every inline `make …`/`manage.py …`."""
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for block in re.findall(r"```(?:sh|bash|console)\n(.*?)```", text, re.DOTALL):
            for line in block.splitlines():
                command = line.split(" #", 1)[0].strip()
                if command and not command.startswith("#"):
                    found.append((document.name, command))
        for span in re.findall(r"`([^`\n]+)`", text):
            if span.startswith(("make ", ".venv/bin/python manage.py ", "python manage.py ")):
                found.append((document.name, span))
    return found


def manage_calls() -> list[tuple[str, list[str]]]:
    calls = []
    for document, line in documented_lines():
        match = re.search(r"(?:^|\s)(?:\.venv/bin/)?python manage\.py (.+)$", line)
        if match and "docker compose" not in line:
            calls.append((document, shlex.split(match.group(1).split("&&")[0].split("|")[0])))
    return calls


def test_the_documents_show_commands_at_all():
    assert len(manage_calls()) >= 10
    assert any(line.startswith("make ") for _doc, line in documented_lines())


def test_every_documented_make_target_exists():
    makefile = (ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][\w.-]*):", makefile, re.MULTILINE))
    missing = [
        (document, line)
        for document, line in documented_lines()
        if line.startswith("make ")
        for word in shlex.split(line)[1:2]
        if "=" not in word and word not in targets
    ]
    assert missing == []


def test_every_documented_management_command_exists_and_accepts_its_arguments():
    commands = get_commands()
    problems = []
    for document, argv in manage_calls():
        name, *args = argv
        if name == "…":
            continue  # "manage.py …": any command
        if name not in commands:
            problems.append(f"{document}: no command '{name}'")
            continue
        if PLACEHOLDER.search(" ".join(args)):
            continue  # a pattern for the reader to fill in (SLUG, FILE, …): the name alone is checked
        parser = load_command_class(commands[name], name).create_parser("manage.py", name)
        try:
            parser.parse_args(args)
        except (SystemExit, CommandError):
            problems.append(f"{document}: manage.py {name} {' '.join(args)} is refused by its parser")
    assert problems == []


@pytest.mark.django_db
def test_the_safe_documented_commands_run_as_written_on_the_demo(tmp_path, monkeypatch):
    call_command("load_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115 (closed with the process)
    monkeypatch.chdir(ROOT)
    ran = []
    for document, argv in manage_calls():
        name, *args = argv
        if name not in SAFE or PLACEHOLDER.search(" ".join(args)):
            continue
        if any(arg.endswith((".json", ".csv")) and not (ROOT / arg).exists() for arg in args):
            continue  # an example name such as exp2.study.json: the reader's own file
        call_command(name, *args, stdout=(tmp_path / "out.txt").open("w"))
        ran.append(f"{document}: {name} {' '.join(args)}")
    assert any("simulate_judges demo" in line for line in ran), ran


def test_the_readme_ability_example_names_the_demos_own_systems_and_leaves_it_room():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "claude-3.7-sonnet" not in readme
    assert "simulate_judges demo --judges 4 --ability features:claude=-0.35" in readme


def test_make_worker_and_beat_refuse_clearly_without_a_broker(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CELERY_BROKER_URL", "CACHE_REDIS_URL")}
    for target in ("worker", "beat"):
        result = subprocess.run(
            # -o: never (re)build the virtualenv from here, whatever the files' times say.
            ["make", "--no-print-directory", "-o", str(ROOT / ".venv" / "bin" / ".installed"), target],
            cwd=ROOT,
            env={**env, "ENV_FILE": ""},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode != 0
        assert "No broker is configured: set REDIS_URL" in result.stderr
        assert "amqp" not in result.stdout + result.stderr


def test_compose_reads_its_own_env_file_never_make_runs_development_env():
    compose = (ROOT / "docker-compose.yml").read_text()
    assert "- path: .env.compose" in compose
    assert "- path: .env\n" not in compose
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "cp .env.example .env " not in readme
    assert "cp .env.example .env.compose" in readme
