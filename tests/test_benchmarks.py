"""The benchmark scripts start (their measurements run by hand, never in the suite)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("script", ["faults.py", "survey_load.py", "judge.py"])
def test_a_benchmark_script_explains_itself_without_starting_anything(script):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout
