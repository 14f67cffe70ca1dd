"""The headline test (CR2 over vignettes, judge design effect, Satterthwaite df) against real R clubSandwich."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose

from analysis import bradley_terry as bt
from analysis.bradley_terry.headline_test import headline_test

from .rscript import run_r

ABILITIES = np.array([0.0, 0.3, -0.2, 0.5, 0.1])


def unbalanced(seed=3, vignettes=4, missing=0.3):
    rng = np.random.default_rng(seed)
    data = bt.simulate_judgments(
        ABILITIES, vignettes=vignettes, repetitions=5, rng=rng, answer_sd=0.5, order_effect=0.2
    )
    keep = rng.random(len(data.winners)) > missing
    return {key: getattr(data, key)[keep] for key in ("winners", "losers", "first", "judges", "vignettes")}


R_HEADLINE = """
suppressMessages({library(clubSandwich); library(sandwich)})
d <- read.csv("comparisons.csv")
a <- pmin(d$w, d$l); b <- pmax(d$w, d$l)
y <- as.numeric(d$w == a)
X <- matrix(0, nrow(d), 4); colnames(X) <- paste0("i", 1:4)
for (k in 1:4) X[, k] <- (a == k) - (b == k)
if (ORDER) X <- cbind(X, z = ifelse(d$first == a, 1, -1))
fit <- glm(y ~ 0 + X, family = binomial, control = glm.control(epsilon = 1e-12))
V2 <- vcovCR(fit, cluster = d$vignette, type = "CR2")
ct <- coef_test(fit, vcov = V2, test = "Satterthwaite")
cell <- paste(d$judge, d$vignette)
deff <- pmax(1, diag(vcovCL(fit, cluster = d$judge, type = "HC0")) / diag(vcovCL(fit, cluster = cell, type = "HC0")))
m <- pmax(deff, 0.25 * diag(vcov(fit)) / diag(V2))  # never below half the Wald SE
se <- sqrt(m * diag(V2))
write.csv(data.frame(estimate = coef(fit), se = se, df = ct$df_Satt, p = 2 * pt(-abs(coef(fit) / se), ct$df_Satt),
                     deff = deff), "out_systems.csv", row.names = FALSE)
w <- c(1, -1, 0, 0, if (ORDER) 0) * sqrt(m)  # the contrast b - c on the scaled coefficients
lc <- linear_contrast(fit, vcov = V2, contrasts = matrix(w, nrow = 1), test = "Satterthwaite")
write.csv(data.frame(se = lc$SE, df = lc$df), "out_contrast.csv", row.names = FALSE)
"""


@pytest.mark.r
@pytest.mark.parametrize("order", [False, True])
def test_it_equals_clubsandwich_cr2_with_satterthwaite_df_and_the_judge_design_effect(tmp_path, order):
    data = unbalanced()
    table = {"w": data["winners"], "l": data["losers"], "first": data["first"]}
    table |= {"judge": data["judges"], "vignette": data["vignettes"]}
    r = run_r(R_HEADLINE.replace("ORDER", "TRUE" if order else "FALSE"), {"comparisons": table}, tmp_path)
    ours = headline_test(
        data["winners"],
        data["losers"],
        5,
        reference=0,
        judges=data["judges"],
        vignettes=data["vignettes"],
        first=data["first"] if order else None,
    )
    systems = r["systems"]
    # glm stops at a relative deviance change of 1e-12, which leaves the sixth digit of CR2's SE to move.
    assert_allclose(ours.estimates[1:], systems["estimate"][:4], rtol=1e-6)
    assert_allclose(ours.se[1:], systems["se"][:4], rtol=1e-5)
    assert_allclose(ours.df[1:], systems["df"][:4], rtol=1e-5)
    assert_allclose(ours.p[1:], systems["p"][:4], rtol=1e-4)
    assert_allclose(ours.design_effect[1:], systems["deff"][:4], rtol=1e-5)
    difference = ours.contrast(np.array([0.0, 1.0, -1.0, 0.0, 0.0]))
    assert_allclose([difference.se, difference.df], [r["contrast"]["se"][0], r["contrast"]["df"][0]], rtol=1e-5)


def test_counts_stand_for_repeated_comparisons():
    data = unbalanced(seed=5)
    once = headline_test(
        data["winners"], data["losers"], 5, reference=0, judges=data["judges"], vignettes=data["vignettes"]
    )
    twice = headline_test(
        np.r_[data["winners"], data["winners"]],
        np.r_[data["losers"], data["losers"]],
        5,
        reference=0,
        judges=np.r_[data["judges"], data["judges"]],
        vignettes=np.r_[data["vignettes"], data["vignettes"]],
    )
    counted = headline_test(
        data["winners"],
        data["losers"],
        5,
        reference=0,
        judges=data["judges"],
        vignettes=data["vignettes"],
        counts=np.full(len(data["winners"]), 2.0),
    )
    assert_allclose(counted.se, twice.se, rtol=1e-8)
    assert_allclose(counted.df, twice.df, rtol=1e-8)
    # The same judges and vignettes judged twice over say nothing more about other judges and vignettes: the
    # interval, which generalises over both, stays as wide (it shrank only by float noise, and flaked on that).
    assert_allclose(counted.se[1:], once.se[1:], rtol=1e-6)
    assert np.all(np.diag(counted.covariance)[1:] > 0)


def test_there_is_no_test_below_three_vignettes_and_the_reason_is_said():
    data = unbalanced(vignettes=2, missing=0.0)
    result = headline_test(
        data["winners"], data["losers"], 5, reference=0, judges=data["judges"], vignettes=data["vignettes"]
    )
    assert not result.tested
    assert "only 2 vignettes" in result.why_not
    assert np.isnan(result.p).all()
    assert np.isnan(result.ci_low[1:]).all()
    assert np.isfinite(result.estimates).all()  # estimates stay
    assert math.isnan(result.contrast(np.array([0.0, 1.0, -1.0, 0.0, 0.0])).p)


def test_there_is_no_test_with_one_judge():
    data = unbalanced(missing=0.0)
    result = headline_test(
        data["winners"], data["losers"], 5, reference=0, judges=np.zeros(len(data["winners"])),
        vignettes=data["vignettes"],
    )  # fmt: skip
    assert not result.tested
    assert "one judge" in result.why_not
    assert np.isnan(result.p).all()


def test_the_covariance_is_positive_semidefinite_and_the_reference_fixed():
    data = unbalanced(seed=11, vignettes=3, missing=0.4)
    result = headline_test(
        data["winners"], data["losers"], 5, reference=0, judges=data["judges"], vignettes=data["vignettes"]
    )
    assert result.tested
    assert np.linalg.eigvalsh(result.covariance).min() > -1e-12
    assert result.se[0] == 0
    assert math.isnan(result.p[0])
    assert (result.design_effect >= 1).all()
    assert (result.df[1:] > 0).all()
    assert (result.df[1:] < 3).all()
