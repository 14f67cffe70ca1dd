# MoralJudge: `make run` serves the demo study; `make test` runs the suite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEV_ENV := DEBUG=1
DEMO_ABILITIES := --ability gpt-4o=0.5 --ability claude=0.3 --ability philosopher=0.2

.PHONY: run test lint format migrations-check venv worker beat benchmarks clean

$(BIN)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

venv: $(BIN)/.installed

run: venv
	$(DEV_ENV) $(BIN)/python manage.py migrate --no-input
	$(DEV_ENV) $(BIN)/python manage.py load_demo
	# Simulated judges (only the first time) so the dashboard has results to show.
	$(DEV_ENV) $(BIN)/python manage.py simulate_judges demo --until-completed 16 $(DEMO_ABILITIES)
	$(DEV_ENV) $(BIN)/python manage.py refit demo
	$(DEV_ENV) $(BIN)/python manage.py runserver 127.0.0.1:8000

test: venv
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: venv
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

migrations-check: venv
	$(DEV_ENV) $(BIN)/python manage.py makemigrations --check --dry-run

worker: venv
	$(DEV_ENV) $(BIN)/celery -A moraljudge worker --loglevel=info

beat: venv
	$(DEV_ENV) $(BIN)/celery -A moraljudge beat --loglevel=info

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles
