"""`manage.py fit_bt` and `manage.py power` as an operator runs them."""

import json
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from numpy.testing import assert_allclose

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "bt"
PUBLISHED = json.loads((FIXTURES / "published.json").read_text())
REPORTED_POWER = json.loads((FIXTURES / "reported_power.json").read_text())["power"]


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_json_output_is_one_object_with_the_published_citation_abilities():
    output = run("fit_bt", str(FIXTURES / "citations.csv"), "--reference", "Biometrika", "--json")
    result = json.loads(output)
    assert set(result) == {
        "reference",
        "n_comparisons",
        "log_likelihood",
        "converged",
        "items",
        "order_effect",
        "problems",
    }
    assert result["reference"] == "Biometrika"
    assert result["n_comparisons"] == 3727
    assert result["order_effect"] is None
    assert result["problems"] == []
    assert result["converged"] is True
    table = PUBLISHED["citations"]["models"]["ref_Biometrika"]["printed_abilities"]["table"]
    for item in result["items"]:
        assert set(item) == {"item", "estimate", "se", "z", "p", "ci_low", "ci_high", "wins", "losses"}
        assert_allclose(item["estimate"], table[item["item"]]["estimate"], atol=5e-8)


def test_order_effect_flag_reads_the_first_column_as_home_advantage():
    output = run("fit_bt", str(FIXTURES / "baseball_first.csv"), "--reference", "Baltimore", "--order-effect", "--json")
    order = json.loads(output)["order_effect"]
    published = PUBLISHED["baseball"]["models"]["home_advantage"]["coefficients"]["at.home"]
    assert_allclose(order["estimate"], published["estimate"], atol=5e-5)
    assert_allclose(order["se"], published["se"], atol=5e-5)


def test_order_column_home_reads_bradleyterry2s_baseball_file_as_published():
    output = run(
        "fit_bt",
        str(FIXTURES / "baseball.csv"),
        "--reference",
        "Baltimore",
        "--order-column",
        "home",
        "--order-effect",
        "--json",
    )
    result = json.loads(output)
    published = PUBLISHED["baseball"]["models"]["home_advantage"]["coefficients"]
    assert_allclose(result["order_effect"]["estimate"], published["at.home"]["estimate"], atol=5e-5)
    boston = next(item for item in result["items"] if item["item"] == "Boston")
    assert_allclose(boston["estimate"], published["Boston"]["estimate"], atol=5e-5)
    assert result["n_comparisons"] == 273


def test_a_missing_order_column_is_named_in_the_error():
    with pytest.raises(CommandError, match="`home` column"):
        run(
            "fit_bt", str(FIXTURES / "citations.csv"), "--reference", "JASA", "--order-column", "home", "--order-effect"
        )


def test_bias_reduced_flag_gives_flatlizards_estimates_and_lists_the_unlinked_components():
    output = run(
        "fit_bt", str(FIXTURES / "flatlizards_contests.csv"), "--reference", "lizard003", "--bias-reduced", "--json"
    )
    result = json.loads(output)
    published = PUBLISHED["flatlizards"]["models"]["unstructured_bias_reduced"]["coefficients"]
    lizard180 = next(item for item in result["items"] if item["item"] == "lizard180")
    assert_allclose(lizard180["estimate"], published["lizard180"]["estimate"], atol=1e-4)
    assert result["bias_reduced"] is True
    assert [effect["name"] for effect in result["unlinked"]][:1] == ["lizard011 - lizard060"]
    table = run("fit_bt", str(FIXTURES / "flatlizards_contests.csv"), "--reference", "lizard003", "--bias-reduced")
    assert table.startswith("Bias-reduced (Firth) Bradley-Terry abilities")
    assert "lizard011 - lizard060: -1.0986 (se 2.3094)" in table


def test_the_readable_table_aligns_items_and_marks_significance_with_stars():
    output = run("fit_bt", str(FIXTURES / "baseball_first.csv"), "--reference", "Baltimore", "--order-effect")
    lines = output.splitlines()
    assert any(line.startswith("Milwaukee") and "***" in line for line in lines)
    assert any(line.startswith("order effect") and "*" in line for line in lines)
    item_lines = [line for line in lines if line.split(" ")[0] in {"Baltimore", "Boston", "Toronto"}]
    assert len({line.index("[") for line in item_lines}) == 1  # columns line up


def test_problems_are_reported_in_words_and_json_has_no_nan(tmp_path):
    path = tmp_path / "never_wins.csv"
    path.write_text("winner,loser\nA,B\nB,A\nA,C\nB,C\n")
    result = json.loads(run("fit_bt", str(path), "--reference", "A", "--json"))
    assert result["converged"] is False
    assert any("'C' never wins" in problem for problem in result["problems"])
    assert next(item for item in result["items"] if item["item"] == "C")["estimate"] is None


def test_an_unknown_reference_is_a_clear_command_error():
    with pytest.raises(CommandError, match="'Nature' is not an item"):
        run("fit_bt", str(FIXTURES / "citations.csv"), "--reference", "Nature")


def test_a_missing_or_malformed_file_is_a_clear_command_error(tmp_path):
    with pytest.raises(CommandError, match="cannot read"):
        run("fit_bt", str(tmp_path / "absent.csv"), "--reference", "A")
    bad = tmp_path / "bad.csv"
    bad.write_text("first,second\nA,B\n")
    with pytest.raises(CommandError, match="missing column"):
        run("fit_bt", str(bad), "--reference", "A")
    bad.write_text("winner,loser,n\nA,B,two\n")
    with pytest.raises(CommandError, match="n must be a whole number"):
        run("fit_bt", str(bad), "--reference", "A")


def test_order_effect_without_a_first_column_is_refused():
    with pytest.raises(CommandError, match="first"):
        run("fit_bt", str(FIXTURES / "citations.csv"), "--reference", "JASA", "--order-effect")


def test_power_best_vs_worst_at_five_questions_reproduces_the_method_figure_from_the_defaults():
    output = run("power", "--test", "best-vs-worst", "--questions", "5", "--seed", "1", "--json")
    result = json.loads(output)
    assert result["test"] == "best-vs-worst"
    assert result["simulations"] == 10_000
    assert (result["systems"], result["vignettes"], result["repetitions"], result["gap"]) == (7, 12, 8, 0.4)
    assert abs(result["power"] - REPORTED_POWER["power"]) < 3 * result["mc_se"]
    assert result["repetitions_needed_for_0.8"] <= 8


def test_power_command_runs_the_dashboards_test_by_default_and_approximations_only_when_asked():
    output = run(
        "power", "--questions", "5", "--answer-sd", "0.3", "--vignettes", "4", "--repetitions", "4",
        "--simulations", "100", "--lever-simulations", "0", "--seed", "2",
    )  # fmt: skip
    assert (
        "the test: the headline test (CR2 over vignettes × judge design effect, Satterthwaite df), Holm within a question"
        in output
    )
    assert "at alpha 0.01" in output
    assert "answer-level SD 0.3" in output
    assert output.count("    system ") == 6
    result = json.loads(
        run("power", "--abilities", "0,0,0.5", "--interval", "answer-robust", "--simulations", "500", "--json")
    )
    assert result["test"] == "reported"
    assert result["effects"] == [0.0, 0.5]
    assert result["interval"] == "answer-robust"
    assert result["false_positive_rate"] is not None


def test_power_json_keeps_power_and_adds_the_interval_df_levers_and_what_reaches_80_percent_with_reasons():
    result = json.loads(
        run(
            "power",
            "--systems",
            "3",
            "--gap",
            "2",
            "--vignettes",
            "3",
            "--repetitions",
            "2",
            "--answer-sd",
            "1",
            "--simulations",
            "40",
            "--lever-simulations",
            "10",
            "--seed",
            "4",
            "--json",
        )
    )
    assert 0 <= result["power"] <= 1
    assert result["interval"].startswith("the headline test (CR2")
    assert result["df"] > 0
    assert [point["vignettes"] for point in result["levers"]["more_vignettes"]][:2] == [3, 6]
    assert {"vignettes_needed_for_0.8", "repetitions_needed_for_0.8"} <= set(result)
    for key, why in (
        ("repetitions_needed_for_0.8", "why_no_repetitions"),
        ("vignettes_needed_for_0.8", "why_no_vignettes"),
    ):
        assert (result[key] is None) == bool(result[why])  # never None without a reason


def test_power_command_refuses_reported_only_options_for_best_vs_worst_and_bad_abilities():
    with pytest.raises(CommandError, match="--answer-sd apply to --test reported only"):
        run("power", "--test", "best-vs-worst", "--answer-sd", "0.2")
    with pytest.raises(CommandError, match="numbers separated by commas"):
        run("power", "--abilities", "0,high")


def test_power_command_rejects_an_impossible_design():
    with pytest.raises(CommandError, match="two systems"):
        run("power", "--systems", "1", "--vignettes", "12", "--repetitions", "8", "--gap", "0.4")


def judged_file(tmp_path, *, vignettes=8, seed=4) -> tuple[Path, object]:
    """Simulated judgments as a fit_bt CSV: winner, loser, first, judge and vignette per row."""
    from analysis import bradley_terry as bt

    names = ["ref", "b", "c", "d"]
    data = bt.simulate_judgments(
        np.array([0.0, 0.4, -0.2, 0.3]), vignettes=vignettes, repetitions=6, rng=np.random.default_rng(seed),
        answer_sd=0.5,
    )  # fmt: skip
    path = tmp_path / "judged.csv"
    lines = ["winner,loser,first,judge,vignette"]
    lines += [
        f"{names[w]},{names[lo]},{names[f]},j{j},v{v}"
        for w, lo, f, j, v in zip(data.winners, data.losers, data.first, data.judges, data.vignettes, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path, data


def test_cluster_judge_and_vignette_puts_the_headline_test_in_every_items_numbers(tmp_path):
    from analysis import bradley_terry as bt

    path, data = judged_file(tmp_path)
    plain = json.loads(run("fit_bt", str(path), "--reference", "ref", "--json"))
    result = json.loads(
        run("fit_bt", str(path), "--reference", "ref", "--cluster", "judge", "--cluster", "vignette", "--json")
    )
    assert result["interval"] == "CR2 over vignettes × judge design effect, Satterthwaite df"
    assert (result["tested"], result["why_not"]) == (True, "")
    assert result["clusters"] == {"judge": len(np.unique(data.judges)), "vignette": 8}
    # The dashboard's test on the same judgments: the same se, df (per item) and p.
    test = bt.headline_test(data.winners, data.losers, 4, reference=0, judges=data.judges, vignettes=data.vignettes)
    items = {item["item"]: item for item in result["items"]}
    assert items["ref"]["df"] is None  # the reference
    for k, name in enumerate(["ref", "b", "c", "d"][1:], start=1):
        numbers = [items[name][key] for key in ("se", "df", "p")]
        assert_allclose(numbers, [test.se[k], test.df[k], test.p[k]], rtol=1e-6)
    assert result["df"] is None  # the df differ by item
    b, plain_b = result["items"][0], plain["items"][0]
    assert b["estimate"] == plain_b["estimate"]  # the same fit, other standard errors
    assert b["ci_low"] < b["estimate"] < b["ci_high"]
    assert "interval" not in plain  # without --cluster: the Wald numbers, as before


def test_with_two_vignettes_fit_bt_prints_a_narrower_interval_and_no_p_or_stars(tmp_path):
    path, data = judged_file(tmp_path, vignettes=2)
    args = ("fit_bt", str(path), "--reference", "ref", "--cluster", "judge", "--cluster", "vignette")
    result = json.loads(run(*args, "--json"))
    assert result["tested"] is False
    assert "only 2 vignettes" in result["why_not"]
    assert "narrower" in result["why_not"]
    assert result["interval"] == "cluster-robust (judge), narrower: no test"
    assert result["df"] == len(np.unique(data.judges)) - 1
    assert all(item["p"] is None and item["z"] is None for item in result["items"])
    assert result["items"][0]["ci_low"] < result["items"][0]["ci_high"]
    text = run(*args)
    assert "No p or stars." in text
    assert "*" not in text.split("Signif. codes")[0]


def test_a_cluster_column_the_file_lacks_is_a_clear_command_error(tmp_path):
    path, _ = judged_file(tmp_path)
    with pytest.raises(CommandError, match="no column 'rater' to cluster on"):
        run("fit_bt", str(path), "--reference", "ref", "--cluster", "rater")
    with pytest.raises(CommandError, match="one or two different columns"):
        run("fit_bt", str(path), "--reference", "ref", "--cluster", "judge", "--cluster", "judge")


@pytest.mark.r
def test_the_clustered_numbers_equal_rs_clubsandwich_headline_test(tmp_path):
    from .rscript import run_r

    path, _ = judged_file(tmp_path, seed=9)
    ours = json.loads(
        run("fit_bt", str(path), "--reference", "ref", "--cluster", "judge", "--cluster", "vignette", "--json")
    )
    script = """
suppressMessages({library(clubSandwich); library(sandwich)})
d <- read.csv("judged.csv")
others <- c("b", "c", "d")
X <- sapply(others, function(k) (d$winner == k) - (d$loser == k))
y <- rep(1, nrow(d))
fit <- glm(y ~ 0 + X, family = binomial, control = glm.control(epsilon = 1e-12))
V2 <- vcovCR(fit, cluster = d$vignette, type = "CR2")
df <- coef_test(fit, vcov = V2, test = "Satterthwaite")$df_Satt
cell <- paste(d$judge, d$vignette)
deff <- pmax(1, diag(vcovCL(fit, cluster = d$judge, type = "HC0")) / diag(vcovCL(fit, cluster = cell, type = "HC0")))
se <- sqrt(pmax(deff * diag(V2), 0.25 * diag(vcov(fit))))  # never below half the Wald SE
p <- 2 * pt(-abs(coef(fit) / se), df = df)
write.csv(data.frame(name = others, se = se, p = p, df = df, low = coef(fit) - qt(0.975, df) * se), "out_r.csv",
          row.names = FALSE)
"""
    (tmp_path / "script.R").write_text(script)
    r = run_r(script, {}, tmp_path)["r"]
    for k, name in enumerate(r["name"]):
        item = next(i for i in ours["items"] if i["item"] == name)
        assert_allclose(
            [item["se"], item["p"], item["df"], item["ci_low"]],
            [r["se"][k], r["p"][k], r["df"][k], r["low"][k]],
            rtol=2e-5,
        )
