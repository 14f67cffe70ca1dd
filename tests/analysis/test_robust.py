"""Cluster-robust (sandwich) intervals over judges and answers, against R's sandwich::vcovCL."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from analysis import bradley_terry as bt

from .rscript import btm_table, run_r

NAMES = ["ref", "b", "c", "d", "e"]


def judged(seed=3, answer_sd=0.5, order_effect=0.2, repetitions=6, vignettes=8):
    rng = np.random.default_rng(seed)
    abilities = np.array([0.0, 0.3, -0.2, 0.5, 0.1])
    return bt.simulate_judgments(
        abilities, vignettes=vignettes, repetitions=repetitions, rng=rng, answer_sd=answer_sd, order_effect=order_effect
    )


R_FIT = """
library(BradleyTerry2)
library(sandwich)
d <- read.csv("comparisons.csv")
lv <- c("ref", "b", "c", "d", "e")
d$p1 <- data.frame(item = factor(d$p1, levels = lv), first = 1)
d$p2 <- data.frame(item = factor(d$p2, levels = lv), first = 0)
fit <- BTm(y, p1, p2, formula = ~ item + first, id = "item", data = d, control = glm.control(epsilon = 1e-12))
save <- function(V, name) {
  se <- sqrt(diag(V))
  G <- min(length(unique(d$judge)), length(unique(d$vignette)))
  p <- 2 * pt(-abs(coef(fit) / se), df = G - 1)
  write.csv(data.frame(name = sub("^item", "", names(coef(fit))), estimate = coef(fit), se = se, p = p),
            paste0("out_", name, ".csv"), row.names = FALSE)
}
"""

R_VCOVCL = (
    R_FIT
    + """
save(vcovCL(fit, cluster = d[, c("judge", "vignette")], type = "HC0"), "hc0")
save(vcovCL(fit, cluster = d[, c("judge", "vignette")], type = "HC1"), "hc1")
"""
)

R_SHARED = (
    R_FIT
    + """
ef <- estfun(fit)
n <- nrow(ef)
a1 <- paste(d$vignette, d$p1$item)
a2 <- paste(d$vignette, d$p2$item)
cell <- paste(d$vignette, pmin(as.character(d$p1$item), as.character(d$p2$item)),
              pmax(as.character(d$p1$item), as.character(d$p2$item)))
adj <- function(g) { G <- length(unique(g)); G / (G - 1) }
shared <- function(outer) {
  both <- paste(c(outer, outer), c(a1, a2))
  adj(both) * (crossprod(rowsum(rbind(ef, ef), both)) - crossprod(rowsum(ef, paste(outer, cell))))
}
meat <- shared(rep(0, n)) + adj(d$judge) * crossprod(rowsum(ef, d$judge)) - shared(d$judge)
save(bread(fit) %*% meat %*% bread(fit) / n^2, "shared")
"""
)


def assert_matches_r(ours: bt.RobustResult, r):
    for name, estimate, se, p in zip(r["name"], r["estimate"], r["se"], r["p"], strict=True):
        if name == "first":
            values = (ours.order_effect.estimate, ours.order_effect.se, ours.order_effect.p)
        else:
            k = NAMES.index(name)
            values = (ours.estimates[k], ours.se[k], ours.p[k])
        assert_allclose(values[:2], (estimate, se), rtol=1e-6, err_msg=name)
        assert_allclose(values[2], p, rtol=1e-5, err_msg=name)  # t tails magnify the last digits of se


@pytest.mark.r
def test_two_way_judge_and_vignette_clustering_equals_vcovcl_with_its_small_sample_adjustments(tmp_path):
    data = judged()
    r = run_r(R_VCOVCL, {"comparisons": btm_table(data, NAMES)}, tmp_path)
    common = dict(reference=0, judges=data.judges, vignettes=data.vignettes, first=data.first, item_names=NAMES)
    for small_sample in ("HC0", "HC1"):
        ours = bt.cluster_robust(data.winners, data.losers, 5, small_sample=small_sample, **common)
        assert_matches_r(ours, r[small_sample.lower()])


@pytest.mark.r
def test_shared_answer_clustering_equals_the_r_code_given_in_its_docstring(tmp_path):
    data = judged(seed=8)
    r = run_r(R_SHARED, {"comparisons": btm_table(data, NAMES)}, tmp_path)
    ours = bt.cluster_robust(
        data.winners,
        data.losers,
        5,
        reference=0,
        judges=data.judges,
        vignettes=data.vignettes,
        first=data.first,
        item_names=NAMES,
        answers="shared",
    )
    assert_matches_r(ours, r["shared"])
    assert ours.clusters == {"judge": len(np.unique(data.judges)), "vignette": 8, "answer": 40}


def test_one_comparison_per_cluster_gives_the_classical_robust_sandwich():
    data = judged(answer_sd=0.0)
    result = bt.fit(data.winners, data.losers, 5, reference=0)
    scores = bt.score_contributions(result, data.winners, data.losers).toarray()
    n = len(scores)
    meat = bt.multiway_meat(bt.score_contributions(result, data.winners, data.losers), [np.arange(n)])
    assert_allclose(meat, n / (n - 1) * scores.T @ scores, atol=1e-10)
    # At the ML estimates the scores sum to zero: one cluster holding everything has no meat.
    assert_allclose(
        bt.multiway_meat(bt.score_contributions(result, data.winners, data.losers), [np.zeros(n)]), 0, atol=1e-20
    )


def test_robust_intervals_widen_when_answers_vary_and_stay_near_wald_when_they_do_not():
    plain = judged(seed=5, answer_sd=0.0, repetitions=30, vignettes=12)
    varied = judged(seed=5, answer_sd=0.8, repetitions=30, vignettes=12)
    ratios = {}
    for label, data in (("plain", plain), ("varied", varied)):
        wald = bt.fit(data.winners, data.losers, 5, reference=0)
        robust = bt.cluster_robust(
            data.winners, data.losers, 5, reference=0, judges=data.judges, vignettes=data.vignettes
        )
        ratios[label] = np.mean(robust.se[1:] / wald.se[1:])
        assert_allclose(robust.estimates, wald.estimates)
    assert 0.7 < ratios["plain"] < 1.3
    assert ratios["varied"] > 1.5


def test_answer_aware_intervals_keep_their_coverage_when_answers_vary():
    """The paper's design (7 systems, 12 vignettes, 8 judgments per cell, 5 per judge), no true
    differences, answer-level SD 0.3: Wald intervals cover about 0.8, the answer-aware ones about 0.94."""
    rng = np.random.default_rng(31)
    covered = {"wald": [], "vignette": [], "shared": []}
    for _ in range(120):
        data = bt.simulate_judgments(np.zeros(7), vignettes=12, repetitions=8, rng=rng, answer_sd=0.3)
        wald = bt.fit(data.winners, data.losers, 7, reference=0)
        covered["wald"].append((wald.ci_low[1:] <= 0) & (wald.ci_high[1:] >= 0))
        for answers in ("vignette", "shared"):
            robust = bt.cluster_robust(
                data.winners,
                data.losers,
                7,
                reference=0,
                judges=data.judges,
                vignettes=data.vignettes,
                answers=answers,
                fitted=wald,
            )
            covered[answers].append((robust.ci_low[1:] <= 0) & (robust.ci_high[1:] >= 0))
    coverage = {key: float(np.mean(value)) for key, value in covered.items()}
    # 720 interval checks each, correlated within a data set: a standard error of about 0.015.
    assert coverage["wald"] < 0.87
    assert 0.91 <= coverage["vignette"] <= 0.98
    assert 0.91 <= coverage["shared"] <= 0.98


def test_labels_must_be_one_per_comparison_and_answers_a_known_clustering():
    data = judged()
    with pytest.raises(ValueError, match="one per comparison"):
        bt.cluster_robust(data.winners, data.losers, 5, reference=0, judges=data.judges[:-1], vignettes=data.vignettes)
    with pytest.raises(ValueError, match="answers must be one of"):
        bt.cluster_robust(
            data.winners, data.losers, 5, reference=0, judges=data.judges, vignettes=data.vignettes, answers="cell"
        )


def test_a_two_way_variance_that_comes_out_negative_gives_no_interval_rather_than_a_zero_width_one():
    # Three vignettes, 60 comparisons: inclusion-exclusion leaves c's variance below 0 (R's vcovCL: NaN).
    rng = np.random.default_rng(12)
    winners = rng.integers(0, 3, 60)
    losers = (winners + rng.integers(1, 3, 60)) % 3
    judges, vignettes = rng.integers(0, 20, 60), rng.integers(0, 3, 60)
    names = ["ref", "b", "c"]
    fitted = bt.fit(winners, losers, 3, reference=0, item_names=names)
    result = bt.cluster_robust(
        winners, losers, 3, reference=0, judges=judges, vignettes=vignettes, item_names=names, fitted=fitted
    )
    assert np.diag(result.covariance)[2] < 0
    assert np.isnan(result.se[2])
    assert np.isnan(result.ci_low[2])
    assert np.isnan(result.ci_high[2])
    assert result.se[0] == 0.0  # the reference stays fixed at 0
    assert result.se[1] > 0


def test_the_judge_and_two_way_sandwiches_sharing_a_memo_are_those_computed_alone():
    data = judged(seed=9)
    fitted = bt.fit(data.winners, data.losers, 5, reference=0, first=data.first)
    common = dict(reference=0, judges=data.judges, first=data.first, fitted=fitted)
    memo: dict = {}
    by_judge = bt.cluster_robust(data.winners, data.losers, 5, vignettes=None, memo=memo, **common)
    two_way = bt.cluster_robust(data.winners, data.losers, 5, vignettes=data.vignettes, memo=memo, **common)
    assert memo["fitted"] is fitted
    assert len(memo["terms"]) == 3  # judges, vignettes, their intersection
    for shared, vignettes in ((by_judge, None), (two_way, data.vignettes)):
        alone = bt.cluster_robust(data.winners, data.losers, 5, vignettes=vignettes, **common)
        np.testing.assert_array_equal(shared.covariance, alone.covariance)
        np.testing.assert_array_equal(shared.se, alone.se)
    assert not np.array_equal(by_judge.se, two_way.se)
