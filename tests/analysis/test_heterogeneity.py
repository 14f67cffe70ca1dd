"""Heterogeneity across vignettes: per-system Cochran's Q and the likelihood-ratio test, against R."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from analysis import bradley_terry as bt

from .rscript import btm_table, run_r

NAMES = ["ref", "b", "c", "d", "e"]


def judged(answer_sd, seed=2, repetitions=20, vignettes=6):
    rng = np.random.default_rng(seed)
    return bt.simulate_judgments(
        np.array([0.0, 0.3, -0.2, 0.5, 0.1]), vignettes=vignettes, repetitions=repetitions, rng=rng, answer_sd=answer_sd
    )


def heterogeneity(data):
    return bt.vignette_heterogeneity(
        data.winners, data.losers, 5, reference=0, vignettes=data.vignettes, item_names=NAMES
    )


R_HETEROGENEITY = """
library(BradleyTerry2)
d <- read.csv("comparisons.csv")
lv <- c("ref", "b", "c", "d", "e")
d$p1 <- factor(d$p1, levels = lv)
d$p2 <- factor(d$p2, levels = lv)
answers <- as.vector(t(outer(sort(unique(d$vignette)), lv, paste, sep = ":")))
d$a1 <- factor(paste(d$vignette, d$p1, sep = ":"), levels = answers)
d$a2 <- factor(paste(d$vignette, d$p2, sep = ":"), levels = answers)
pooled <- BTm(y, p1, p2, data = d)
inter <- BTm(y, a1, a2, data = d)
write.csv(data.frame(lr = deviance(pooled) - deviance(inter), df = df.residual(pooled) - df.residual(inter)),
          "out_lr.csv", row.names = FALSE)
fits <- lapply(sort(unique(d$vignette)), function(v) coef(summary(BTm(y, p1, p2, data = d[d$vignette == v, ]))))
q <- sapply(lv[-1], function(s) {
  b <- sapply(fits, function(cf) cf[paste0("..", s), 1])
  w <- 1 / sapply(fits, function(cf) cf[paste0("..", s), 2])^2
  sum(w * (b - sum(w * b) / sum(w))^2)
})
write.csv(data.frame(name = lv[-1], q = q), "out_q.csv", row.names = FALSE)
"""


@pytest.mark.r
def test_q_and_the_likelihood_ratio_test_equal_r(tmp_path):
    data = judged(answer_sd=0.5)
    r = run_r(R_HETEROGENEITY, {"comparisons": btm_table(data, NAMES)}, tmp_path)
    ours = heterogeneity(data)
    assert ours.problems == []
    assert_allclose(ours.lr, r["lr"]["lr"][0], rtol=1e-6)
    assert ours.lr_df == int(r["lr"]["df"][0]) == 6 * 4 - 4
    assert_allclose([s.q for s in ours.systems], r["q"]["q"], rtol=1e-5)
    assert [s.item for s in ours.systems] == list(r["q"]["name"])


def test_heterogeneity_is_detected_when_answers_vary_and_not_when_they_do_not():
    plain, varied = heterogeneity(judged(answer_sd=0.0, seed=3)), heterogeneity(judged(answer_sd=0.8, seed=3))
    assert plain.lr_p > 0.01
    assert varied.lr_p < 0.001
    assert np.median([s.p for s in varied.systems]) < 0.01
    # The between-vignette SD of a difference of two answers is about sqrt(2) x 0.8.
    assert 0.6 < np.median([s.between_sd for s in varied.systems]) < 1.8
    assert all(s.n_vignettes == 6 and s.df == 5 for s in varied.systems)


def test_a_vignette_with_an_item_that_never_wins_leaves_only_the_likelihood_ratio_test_empty():
    data = judged(answer_sd=0.0, seed=4)
    winners, losers = data.winners.copy(), data.losers.copy()
    flip = (data.vignettes == 0) & (winners == 4)  # 'e' loses everything on the first vignette
    winners[flip], losers[flip] = losers[flip], winners[flip]
    result = bt.vignette_heterogeneity(winners, losers, 5, reference=0, vignettes=data.vignettes, item_names=NAMES)
    assert result.lr is None
    assert result.lr_p is None
    assert "likelihood-ratio test needs finite estimates" in result.problems[0]
    assert "Vignette 0: 'e' never wins" in result.problems[1]
    assert result.systems[3].n_vignettes == 5
    assert np.isfinite(result.systems[3].q)
    assert result.as_dict()["lr"] is None


def test_each_systems_q_test_is_holm_adjusted_across_the_systems():
    result = heterogeneity(judged(answer_sd=0.0, seed=5))
    p = np.array([s.p for s in result.systems])
    assert_allclose([s.p_holm for s in result.systems], bt.holm(p))
    assert all(s.p_holm >= s.p for s in result.systems)
    # Under the null (answers do not vary) flagging "any system" at 0.05 now errs at most 5% of the time:
    # the smallest adjusted p is the Bonferroni bound m x min p, or 1.
    assert min(s.p_holm for s in result.systems) == pytest.approx(min(1.0, len(p) * p.min()))
