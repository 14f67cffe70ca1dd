"""The benchmark scripts start (their measurements run by hand, never in the suite)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def postgres_server(db: dict) -> str:
    """The test database's server as a URL without a database name (the benchmarks make their own)."""
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"


@pytest.mark.parametrize(
    "script",
    ["faults.py", "survey_load.py", "burst.py", "judge.py", "attacks.py", "authenticity.py", "pilot.py", "power.py"],
)
def test_a_benchmark_script_explains_itself_without_starting_anything(script):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout


@pytest.mark.postgres
def test_judges_spread_over_two_web_processes_behind_nginx_fill_every_cell_exactly_and_lose_nothing():
    """benchmarks/survey_load.py --web-processes 2 --nginx at a tiny size (about 30 s, most of it migrating)."""
    from django.db import connection

    if not Path("/usr/sbin/nginx").exists():
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail("nginx is missing: .ci/run installs Debian's nginx")
        pytest.skip("nginx is not installed")
    db = connection.settings_dict
    server = postgres_server(db)
    tiny = ["--participants", "8", "--concurrency", "4", "--systems", "3", "--vignettes", "2", "--repetitions", "2"]
    tiny += ["--k", "2", "--baseline-requests", "100", "--workers", "1", "--web-processes", "2", "--nginx"]
    tiny += ["--postgres", server, "--database", f"{db['NAME']}_survey_load"]
    tiny += ["--step-rounds", "1", "--step-judges", "3", "--step-concurrency", "1,2"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "survey_load.py"), *tiny],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    # 3 systems x 2 vignettes = 6 cells, 2 judges each, 2 pairs per judge: room for 6 of the 8 judges.
    assert "8 arrived, 6 completed (6 valid), 2 saw 'study is full', errors 0" in out
    assert "guarantee: judgments acknowledged to judges 60, stored 60: lost 0 (ok)" in out
    assert "guarantee: cells over-allocated (completed + reserved above target) 0 (ok)" in out
    assert "guarantee: cells exactly at target (counters and stored judgments), of 6 6 (ok)" in out
    served = re.search(r"requests served per web process: (\d+) / (\d+)", out)
    assert served, out
    assert min(map(int, served.groups())) > 50  # nginx spread the judges over both processes
    assert "admin pages served" in out  # a sign-in on one process holds on the other


@pytest.mark.postgres
def test_a_tiny_burst_through_the_dockerfiles_gunicorn_fills_the_study_exactly_with_nothing_lost():
    """benchmarks/burst.py at a tiny size, this tree only (about a minute, most of it migrating)."""
    from django.db import connection

    db = connection.settings_dict
    server = postgres_server(db)
    tiny = ["--judges", "50", "--concurrency", "10", "--healthz-requests", "100"]
    tiny += ["--postgres", server, "--database", f"{db['NAME']}_burst"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "burst.py"), *tiny], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    # 250 cells, R = 50 x 5 / 250 = 1: the 50 judges take every place.
    assert "50 judges sent, 50 completed, 0 saw 'study is full', errors 0" in out
    assert "judgments acknowledged 1250, stored 1250, lost 0" in out
    assert "cells over target (completed + reserved) 0" in out
    assert "places left 0" in out
    assert "guarantees: ok" in out
    # What a judge cost the server (its gunicorn processes) in CPU time, beside the wall-clock rates.
    cpu = re.search(r"server CPU per judge (\d+\.\d) ms = (\d+)x", out)
    assert cpu, out
    assert float(cpu.group(1)) > 0


def test_the_coverage_benchmark_scores_the_headline_against_its_estimand_at_a_tiny_size():
    """benchmarks/coverage.py with one replication of two small cells, balanced and 40% missing (a few seconds)."""
    tiny = [
        "--replications",
        "1",
        "--design",
        "small",
        "--answer-sd",
        "0.6",
        "--vignettes",
        "4",
        "--missing",
        "0",
        "0.4",
    ]
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "coverage.py"), *tiny], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    # The estimand is the population-averaged ability: attenuated against the planted 0.4 at answer SD 0.6.
    estimand = re.search(r"Estimand \(small, τ = 0.6\): population-averaged abilities \[(.*)\]", done.stdout)
    assert estimand, done.stdout
    values = [float(v) for v in estimand.group(1).split(",")]
    assert values[0] == 0.0
    assert 0.3 < values[2] < 0.4
    header = next(line for line in done.stdout.splitlines() if line.startswith("| design"))
    for column in (
        "headline covers estimand",
        "covers planted",
        "df median (min)",
        "smallest SE / Wald SE",
        "FWER Holm",
    ):
        assert column in header
    rows = [line for line in done.stdout.splitlines() if line.startswith("| small")]
    assert [[cell.strip() for cell in row.strip("|").split("|")][:5] for row in rows] == [
        ["small", "0.6", "4", "0.0", "1"],
        ["small", "0.6", "4", "0.4", "1"],
    ]


def test_make_runs_sqlite_holds_a_small_pilot_with_the_sandbox_and_simulated_judges_at_once():
    """benchmarks/pilot.py at a small size (issue 34: SQLite gave 'database is locked' to 2 of 3 judges at once).

    Its own SQLite file and runserver, whatever database the suite runs on (about 25 s, most of it migrating)."""
    tiny = ["--judges", "8", "--writers", "4", "--simulated", "4"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "pilot.py"), *tiny], capture_output=True, text=True, timeout=300
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "server errors seen by participants: 0" in out
    assert "tracebacks in runserver's output: 0" in out
    assert "judges finished: 8/8" in out
    assert "writers finished: 4/4" in out
    assert re.search(r"judgments on pages acknowledged to judges (\d+), stored \1: lost 0", out), out
    assert "simulate_judges: exit 0, 4 of 4 simulated judges completed" in out
    assert "prolific_sandbox: exit 0;" in out
    assert "refused 0" in out
    assert "pilot held: yes" in out


def test_the_power_benchmark_predicts_what_refits_find_at_a_tiny_size():
    """benchmarks/power.py at a tiny size: a prediction, refits of other studies, and how often the refit and the
    simulated test decided alike on the same studies: refits store the headline test's Holm p, so always."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import power as power_benchmark  # benchmarks/power.py

    from analysis.power.reported_test import Design

    row = power_benchmark.compare(
        Design.of(systems=3, gap=1.0, vignettes=4, repetitions=3, pairs_per_judge=3), refits=15, simulations=60
    )
    assert row["alike"] == 1.0  # the refit and the power simulation run the same test
    assert 0 <= row["predicted"] <= 1
    assert 0 <= row["refitted"] <= 1
    assert row["se"] > 0


def test_the_rank_coverage_benchmark_prints_the_band_beside_the_single_intervals_at_a_tiny_size():
    """benchmarks/rank_coverage.py with two studies of one cell (a few seconds)."""
    tiny = ["--replications", "2", "--answer-sd", "0.4", "--vignettes", "4", "--draws", "2000"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "rank_coverage.py"), *tiny], capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if line.startswith("| answer SD"))
    for column in ("6 single intervals jointly", "band jointly", "rank sets jointly", "'best' claimed"):
        assert column in header
    row = next(line for line in done.stdout.splitlines() if line.startswith("| 0.4"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[:4] == ["0.4", "4", "0.0", "2"]
    assert all(re.fullmatch(r"[01]\.\d{3}", cell) for cell in cells[4:7])


def test_the_set_differences_benchmark_prints_coverage_and_confirmed_fragility_at_a_tiny_size():
    """benchmarks/set_differences.py with two studies of one cell and one fragility study (seconds)."""
    tiny = ["--replications", "2", "--answer-sd", "0", "--vignettes", "6", "--fragility-studies", "1"]
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "set_differences.py"), *tiny], capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    row = next(line for line in lines if line.startswith("| 0.0 | 6 |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert re.fullmatch(r"[01]\.\d{3} \(\d+\)", cells[2])  # coverage over the tested differences
    fragility = next(line for line in lines if line.startswith("| 0.0 | 12 |"))
    cells = [cell.strip() for cell in fragility.strip("|").split("|")]
    assert int(cells[2]) >= 1  # the planted 0.4 and 0.3 come out significant in this study of 12 vignettes
    assert cells[4] == "1.000"  # every reported set confirmed by an independent refit
