# MoralJudge: `make run` serves the demo study; `make test` runs the suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEV_ENV := DEBUG=1
PORT ?= 8000
DEMO_ABILITIES := --ability gpt-4o=0.5 --ability claude=0.3 --ability philosopher=0.2

.PHONY: run port-free test lint typecheck format migrations-check messages venv worker beat broker-configured benchmarks clean

$(BIN)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

venv: $(BIN)/.installed

# A development .env, written once and never overwritten: DEBUG on and a key of its own, so that every
# `.venv/bin/python manage.py …` the README shows works from the checkout. Production never reads this one.
.env:
	@printf '# Written once by `make run` for development on this machine (see .env.example for every variable).\nDEBUG=1\nSECRET_KEY=%s\n' \
		"$$($(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(50))')" > $@
	@echo "Wrote a development .env (DEBUG=1 and a generated SECRET_KEY)."

# Said at once, before the minute of setup, rather than by runserver at the very end.
port-free:
	@$(PYTHON) -c 'import socket, sys; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", $(PORT)))' 2>/dev/null \
		|| { echo "Port $(PORT) on 127.0.0.1 is in use: stop what runs there, or choose another, e.g. make run PORT=8001" >&2; exit 1; }

run: port-free venv .env
	$(DEV_ENV) $(BIN)/python manage.py migrate --no-input
	$(DEV_ENV) $(BIN)/python manage.py load_demo --base-url http://127.0.0.1:$(PORT)
	# Simulated judges (only the first time) so the dashboard has results to show.
	$(DEV_ENV) $(BIN)/python manage.py simulate_judges demo --until-completed 16 $(DEMO_ABILITIES)
	$(DEV_ENV) $(BIN)/python manage.py refit demo
	$(DEV_ENV) $(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

# Two pytest-xdist workers for the whole suite (each with its own test database and Redis database, see
# tests/worker_services.py); one process when PYTEST_ARGS picks tests, e.g. make test PYTEST_ARGS=tests/test_http.py.
# TEST_WORKERS=0 runs the whole suite in one process. --dist loadfile: a file's tests share one worker and its
# module fixtures (browsers, fake servers, replica databases) are set up once.
TEST_WORKERS ?= $(if $(PYTEST_ARGS),0,2)
test: venv
	$(BIN)/python -m pytest -n $(TEST_WORKERS) $(if $(filter-out 0,$(TEST_WORKERS)),--dist loadfile) $(PYTEST_ARGS)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy with django-stubs over the application code (settings need a key; no .env is read).
typecheck: venv
	SECRET_KEY=typecheck-only ENV_FILE= $(BIN)/mypy

format: venv
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The participant pages' interface in other languages (locale/<code>/LC_MESSAGES): collect the texts to
# translate into each language's .po, then compile the .mo files the site reads (both are committed).
messages: venv
	$(DEV_ENV) $(BIN)/python manage.py makemessages --all --no-location --ignore=.venv --ignore=tests --ignore=benchmarks --ignore=staticfiles
	$(DEV_ENV) $(BIN)/python manage.py compilemessages --ignore=.venv

migrations-check: venv
	$(DEV_ENV) $(BIN)/python manage.py makemigrations --check --dry-run

# A worker or beat needs a broker: without one Celery would dial amqp://guest@127.0.0.1 (its default) and wait.
broker-configured: venv
	@$(DEV_ENV) $(BIN)/python -c 'import django, os, sys; os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings"); django.setup(); from django.conf import settings; sys.exit(0 if settings.CELERY_BROKER_URL else "No broker is configured: set REDIS_URL (e.g. REDIS_URL=redis://127.0.0.1:6379/0 in .env) to run a worker or beat. Without a broker, make run does every task in-process and needs neither.")'

# Every queue by default; `make worker QUEUES=refit` (or collection, prolific, celery; comma-separated) for one kind.
worker: venv broker-configured
	$(DEV_ENV) $(BIN)/celery -A moraljudge worker --loglevel=info $(if $(QUEUES),-Q $(QUEUES))

beat: venv broker-configured
	$(DEV_ENV) $(BIN)/celery -A moraljudge beat --loglevel=info

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles
