"""`manage.py fit_bt` with a `set` column: `--by set` (per-set estimates, differences between sets) and
`--fragility` (the rows each significant system hinges on, confirmed by refit)."""

import csv
import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from analysis import bradley_terry as bt
from analysis.bradley_terry.simulation import simulate_judgments

NAMES = ["human", "gpt", "claude"]


def write_comparisons(path, *, sets=(("published", [0, 0.5, 0.4]), ("novel", [0, 0.5, -0.3])), seed=5):
    """Judgments of three systems on 6 vignettes per set, claude worse on the novel set; judges judge both sets."""
    rng = np.random.default_rng(seed)
    rows = []
    for name, abilities in sets:
        made = simulate_judgments(np.array(abilities), vignettes=6, repetitions=12, rng=rng, answer_sd=0.2)
        for w, loser, first, judge, vignette in zip(
            made.winners, made.losers, made.first, made.judges, made.vignettes, strict=True
        ):
            rows.append(
                {"winner": NAMES[w], "loser": NAMES[loser], "first": NAMES[first], "judge": f"j{judge}",
                 "vignette": f"{name}-{vignette}", "set": name}
            )  # fmt: skip
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def fit_json(*args) -> dict:
    out = StringIO()
    call_command("fit_bt", *map(str, args), "--reference", "human", "--json", stdout=out)
    return json.loads(out.getvalue())


def test_by_set_prints_each_sets_estimates_and_the_differences_between_sets(tmp_path):
    path = tmp_path / "sets.csv"
    write_comparisons(path)
    result = fit_json(path, "--cluster", "judge", "--cluster", "vignette", "--by", "set")
    assert [one["set"] for one in result["sets"]] == ["published", "novel"]
    differences = {d["system"]: d for d in result["differences"]}
    assert set(differences) == {"gpt", "claude"}
    assert all(
        set(d) >= {"system", "sets", "estimate", "se", "ci_low", "ci_high", "p", "df"} for d in result["differences"]
    )
    claude = differences["claude"]
    assert claude["sets"] == ["published", "novel"]
    novel = {i["item"]: i for i in result["sets"][1]["items"]}
    published = {i["item"]: i for i in result["sets"][0]["items"]}
    # The difference is the per-set fits' difference (the interaction model's likelihood factorises by set).
    assert claude["estimate"] == pytest.approx(novel["claude"]["estimates"] - published["claude"]["estimates"])
    assert claude["ci_low"] < claude["estimate"] < claude["ci_high"] < 0
    assert claude["p"] < 0.05
    assert differences["gpt"]["p"] > 0.05
    assert 5 < claude["df"] <= 11  # Satterthwaite's, at most the vignettes (12) - 1


def test_by_set_needs_a_set_column_and_the_judge_and_vignette_columns(tmp_path):
    path = tmp_path / "plain.csv"
    path.write_text("winner,loser\nhuman,b\nb,human\nhuman,b\n")
    with pytest.raises(CommandError, match="set"):
        fit_json(path, "--by", "set")
    write_comparisons(path)
    with pytest.raises(CommandError, match="--cluster"):
        fit_json(path, "--by", "set")


def test_each_fragility_set_is_confirmed_by_a_refit_and_one_row_fewer_does_not_undo_the_result(tmp_path):
    path = tmp_path / "sets.csv"
    rows = write_comparisons(path)
    result = fit_json(path, "--fragility")
    items = {item["item"]: item for item in result["items"]}
    assert items["human"]["fragility"] is None  # the reference
    assert items["claude"]["fragility"] is None  # not significant
    assert items["gpt"]["p"] < 0.05
    fragile = items["gpt"]["fragility"]
    assert fragile["judgments"] == len(fragile["rows"]) > 0

    def p_without(dropped) -> float:
        kept = [row for n, row in enumerate(rows) if n not in set(dropped)]
        index = {name: k for k, name in enumerate(sorted(NAMES))}
        refit = bt.fit(
            np.array([index[r["winner"]] for r in kept]), np.array([index[r["loser"]] for r in kept]), 3,
            reference=index["human"], item_names=sorted(NAMES),
        )  # fmt: skip
        return float(refit.p[index["gpt"]])

    assert p_without(fragile["rows"]) >= 0.05
    assert p_without(fragile["rows"][:-1]) < 0.05
