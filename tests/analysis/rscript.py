"""Running a short R program on CSV tables, for tests marked `r` (compare with real R)."""

from __future__ import annotations

import csv
import subprocess
from pathlib import Path

import numpy as np


def run_r(script: str, tables: dict[str, dict[str, list]], workdir: Path) -> dict[str, dict[str, np.ndarray]]:
    """Write each table to `<name>.csv`, run `script` there with Rscript, read back `out_*.csv`.

    Output columns that parse as numbers come back as float arrays, others as lists of text;
    R's NA becomes nan."""
    for name, columns in tables.items():
        with (workdir / f"{name}.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(columns)
            writer.writerows(zip(*columns.values(), strict=True))
    (workdir / "script.R").write_text(script)
    done = subprocess.run(["Rscript", "script.R"], cwd=workdir, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return {path.stem[4:]: _read(path) for path in sorted(workdir.glob("out_*.csv"))}


def _read(path: Path) -> dict[str, np.ndarray]:
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    columns = {}
    for key in rows[0]:
        values = [row[key] for row in rows]
        try:
            columns[key] = np.array([float("nan") if v == "NA" else float(v) for v in values])
        except ValueError:
            columns[key] = values
    return columns


def btm_table(data, names: list[str]) -> dict[str, list]:
    """Simulated judgments as BTm's player1/player2 layout: p1 shown first, y = 1 if it won."""
    second = np.where(data.first == data.winners, data.losers, data.winners)
    return {
        "p1": [names[k] for k in data.first],
        "p2": [names[k] for k in second],
        "y": [int(w == f) for w, f in zip(data.winners, data.first, strict=True)],
        "judge": list(data.judges),
        "vignette": list(data.vignettes),
    }
