"""A synthetic judging study with known abilities, for the PPI tests.

Humans judge from the Bradley-Terry abilities plus a per-cell effect (some vignettes favour one answer of a
pair: the heterogeneity that a judge who reads the cell can predict, and the only part of a human vote anyone
can predict; without it PPI has nothing to gain). The model judge sees the same cell, with a position bias, a
preference for its own system and noise of its own. The estimand is the population Bradley-Terry (logistic)
fit over cells, computed once on a large draw (``estimand``)."""

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import expit

from llm_judging import ppi

TRUTH = np.array([0.0, 1.0, -0.8, 0.5])  # item 0 is the reference; item 1 is the judge's own system
PAIRS = [(i, j) for i in range(4) for j in range(i + 1, 4)]


@dataclass(frozen=True)
class Judge:
    scale: float = 1.0  # 1: the judge sees the true differences; less: it is noisier about them
    position: float = 0.0  # logit added to the answer shown first
    self_preference: float = 0.0  # logit added to its own system (item 1)
    noise: float = 0.0  # sd of a per-cell logit error (the judge's own idiosyncrasies)
    samples: int = 1  # picks per display order


HETEROGENEITY = 1.5  # sd of the per-cell logit effect


def human_diff(rng, vignettes):
    cells = np.array([pair for _ in range(vignettes) for pair in PAIRS])
    a, b = cells[:, 0], cells[:, 1]
    return a, b, TRUTH[a] - TRUTH[b] + rng.normal(0, HETEROGENEITY, len(cells))


@lru_cache(maxsize=1)
def estimand() -> np.ndarray:
    """The population fit: logistic regression of P(answer_a wins) on the pair over 300,000 cells."""
    a, b, diff = human_diff(np.random.default_rng(12345), 50_000)
    X, p = ppi.design(a, b, 4, 0), expit(diff)
    return ppi.point_estimate(X, p, p, X, p, lam=0.0)


def simulate(rng, judge: Judge, *, vignettes=100, humans=300):
    """(X, Y, Yhat) for the human-judged rows, (X_u, Yhat_u) for every cell, and the judge's naive picks."""
    a, b, true_diff = human_diff(rng, vignettes)
    own = (a == 1).astype(float) - (b == 1).astype(float)
    judge_diff = judge.scale * true_diff + judge.self_preference * own + rng.normal(0, judge.noise, len(a))
    a_first = rng.random((len(a), judge.samples)) < expit(judge_diff[:, None] + judge.position)
    b_first = rng.random((len(a), judge.samples)) < expit(judge_diff[:, None] - judge.position)
    share = (a_first.sum(1) + b_first.sum(1)) / (2 * judge.samples)
    labelled = rng.integers(len(a), size=humans)
    Y = (rng.random(humans) < expit(true_diff[labelled])).astype(float)
    X_u = ppi.design(a, b, 4, 0)
    naive_X = np.repeat(X_u, 2 * judge.samples, axis=0)
    naive_Y = np.concatenate([a_first, b_first], axis=1).reshape(-1).astype(float)
    return X_u[labelled], Y, share[labelled], X_u, share, naive_X, naive_Y


def covers(result) -> np.ndarray:
    truth = estimand()
    return (result.ci_low <= truth) & (truth <= result.ci_high)
