"""Resampling from per-judge count tables: chunked draws, Poisson weights, the two-way bootstrap
over judges and answers, and split halves."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from analysis import bradley_terry as bt
from analysis.bradley_terry.resampling import refit_weighted
from analysis.services.participant_draws import SplitDraws

from .rscript import btm_table, run_r


def paper_design(rng, *, answer_sd=0.0, abilities=None, repetitions=8):
    abilities = np.zeros(7) if abilities is None else abilities
    return bt.simulate_judgments(abilities, vignettes=12, repetitions=repetitions, rng=rng, answer_sd=answer_sd)


def test_drawing_replicates_in_small_chunks_gives_exactly_the_all_at_once_bootstrap():
    data = paper_design(np.random.default_rng(1), abilities=np.linspace(0, 0.5, 7))
    common = dict(reference=0, clusters=data.judges, first=data.first, n_boot=40)
    at_once = bt.bootstrap(data.winners, data.losers, 7, rng=np.random.default_rng(2), memory_budget=None, **common)
    one_by_one = bt.bootstrap(data.winners, data.losers, 7, rng=np.random.default_rng(2), memory_budget=1, **common)
    assert_allclose(one_by_one.estimates, at_once.estimates, atol=1e-12)
    assert_allclose(one_by_one.ci_low, at_once.ci_low, atol=1e-12)


def test_the_chunk_size_keeps_weights_within_the_memory_budget_whatever_the_number_of_judges():
    rng = np.random.default_rng(3)
    for judges in (1_000, 100_000):
        winners, losers = rng.integers(0, 4, judges), rng.integers(0, 4, judges)
        keep = winners != losers
        tables = bt.cluster_tables(winners[keep], losers[keep], 4, np.arange(judges)[keep])
        chunk = bt.chunk_size(tables, 1000, bt.MEMORY_BUDGET)
        assert 1 <= chunk <= 1000
        assert chunk * 8 * 5 * tables.n_clusters <= bt.MEMORY_BUDGET or chunk == 1


def test_poisson_weights_give_the_multinomial_intervals_to_monte_carlo_error():
    data = paper_design(np.random.default_rng(4), abilities=np.linspace(0, 0.5, 7), repetitions=16)
    common = dict(reference=0, clusters=data.judges, n_boot=2000)
    multinomial = bt.bootstrap(data.winners, data.losers, 7, rng=np.random.default_rng(5), **common)
    poisson = bt.bootstrap(data.winners, data.losers, 7, rng=np.random.default_rng(6), weights="poisson", **common)
    # Monte Carlo SE of a 2.5% percentile from 2,000 replicates: about 0.06 bootstrap SEs.
    tolerance = 4 * 0.06 * np.sqrt(2) * multinomial.se[1:]
    assert np.all(np.abs(poisson.ci_low[1:] - multinomial.ci_low[1:]) < tolerance)
    assert np.all(np.abs(poisson.ci_high[1:] - multinomial.ci_high[1:]) < tolerance)
    with pytest.raises(ValueError, match="weights must be one of"):
        bt.bootstrap(data.winners, data.losers, 7, rng=np.random.default_rng(6), weights="uniform", **common)


def test_two_way_bootstrap_covers_when_answers_vary_where_the_judge_bootstrap_does_not():
    """Paper's design, no true differences, answer-level SD 0.4."""
    rng = np.random.default_rng(7)
    covered = {"judges": [], "two-way": []}
    for _ in range(40):
        data = paper_design(rng, answer_sd=0.4)
        judges_only = bt.bootstrap(data.winners, data.losers, 7, reference=0, clusters=data.judges, rng=rng, n_boot=200)
        two_way = bt.two_way_bootstrap(
            data.winners, data.losers, 7, reference=0, judges=data.judges, vignettes=data.vignettes, rng=rng, n_boot=200
        )
        covered["judges"].append((judges_only.ci_low[1:] <= 0) & (judges_only.ci_high[1:] >= 0))
        covered["two-way"].append((two_way.ci_low[1:] <= 0) & (two_way.ci_high[1:] >= 0))
    coverage = {key: float(np.mean(value)) for key, value in covered.items()}
    assert coverage["judges"] < 0.85
    assert 0.9 <= coverage["two-way"] <= 0.99  # 240 correlated checks: a wide band


def test_two_way_bootstrap_reports_its_clusters_and_the_t_reference():
    data = paper_design(np.random.default_rng(8))
    result = bt.two_way_bootstrap(
        data.winners,
        data.losers,
        7,
        reference=0,
        judges=data.judges,
        vignettes=data.vignettes,
        rng=np.random.default_rng(9),
        n_boot=100,
    )
    assert result.clusters == {"judge": len(np.unique(data.judges)), "vignette": 12, "cell": len(data.judges)}
    assert result.df == 11
    assert result.scheme == "inclusion-exclusion"
    assert result.weights == "multinomial"
    assert result.se[0] == 0
    assert np.all(result.se[1:] > 0)
    assert set(result.n_failed) == {"judge", "vignette", "cell"}


R_VCOVBS = """
library(BradleyTerry2)
library(sandwich)
set.seed(1)
d <- read.csv("comparisons.csv")
lv <- c("ref", "b", "c", "d", "e")
d$p1 <- factor(d$p1, levels = lv)
d$p2 <- factor(d$p2, levels = lv)
fit <- BTm(y, p1, p2, data = d)
V <- vcovBS(fit, cluster = d[, c("judge", "vignette")], R = 600, fix = TRUE)
write.csv(data.frame(se = sqrt(diag(V))), "out_vcovbs.csv", row.names = FALSE)
"""


@pytest.mark.r
def test_the_inclusion_exclusion_bootstrap_agrees_with_rs_multiway_vcovbs(tmp_path):
    names = ["ref", "b", "c", "d", "e"]
    data = bt.simulate_judgments(
        np.array([0.0, 0.3, -0.2, 0.5, 0.1]), vignettes=8, repetitions=6, rng=np.random.default_rng(14), answer_sd=0.5
    )
    r = run_r(R_VCOVBS, {"comparisons": btm_table(data, names)}, tmp_path)["vcovbs"]
    ours = bt.two_way_bootstrap(
        data.winners,
        data.losers,
        5,
        reference=0,
        judges=data.judges,
        vignettes=data.vignettes,
        rng=np.random.default_rng(15),
        n_boot=4000,
    )
    # Both are Monte Carlo estimates (R: 600 replicates per clustering, ours 4,000): a few percent apart.
    assert_allclose(ours.se[1:], r["se"], rtol=0.15)


def test_the_pigeonhole_bootstrap_is_as_conservative_as_documented_without_answer_variation():
    data = paper_design(np.random.default_rng(10), repetitions=16)
    wald = bt.fit(data.winners, data.losers, 7, reference=0)
    result = bt.two_way_bootstrap(
        data.winners,
        data.losers,
        7,
        reference=0,
        judges=data.judges,
        vignettes=data.vignettes,
        rng=np.random.default_rng(11),
        n_boot=400,
        scheme="pigeonhole",
    )
    assert result.df is None
    assert set(result.n_failed) == {"judge x vignette"}
    assert 1.4 < np.mean(result.se[1:] / wald.se[1:]) < 2.1  # about sqrt(3)
    with pytest.raises(ValueError, match="scheme must be one of"):
        bt.two_way_bootstrap(
            data.winners,
            data.losers,
            7,
            reference=0,
            judges=data.judges,
            vignettes=data.vignettes,
            rng=np.random.default_rng(11),
            scheme="wild",
        )


def test_split_half_reliability_never_falls_below_minus_one_and_says_when_it_is_uncorrected():
    rng = np.random.default_rng(12)
    negative = None
    for _ in range(30):
        data = paper_design(rng, repetitions=2)
        result = bt.split_half(data.winners, data.losers, data.judges, 7, 0, rng, n_splits=20)
        assert -1.0 <= result.value <= 1.0
        if not result.spearman_brown:
            negative = result
            assert result.value == result.mean_correlation < 0
    assert negative is not None, "no data set gave a negative mean correlation"
    assert "correlate negatively" in negative.in_words()
    assert "raw correlation" in negative.in_words()


def test_split_half_steps_up_a_positive_correlation_with_spearman_brown():
    rng = np.random.default_rng(13)
    data = paper_design(rng, abilities=np.linspace(0, 2.0, 7))
    result = bt.split_half(data.winners, data.losers, data.judges, 7, 0, rng, n_splits=20)
    r = result.mean_correlation
    assert result.spearman_brown
    assert result.value == pytest.approx(2 * r / (1 + r))
    assert result.value > 0.9
    assert "Spearman-Brown" in result.in_words()
    assert bt.split_half_reliability(data.winners, data.losers, data.judges, 7, 0, np.random.default_rng(1)) > 0.9


def _split_half_as_drawn_before(winners, losers, judges, rng, n_splits):
    """The split-half correlations as they were first computed: both halves' counts from their own weights."""
    tables = bt.cluster_tables(winners, losers, 7, judges)
    basis = bt.RefitBasis(bt.fit(winners, losers, 7, reference=0), 0, np.ones(7, bool))
    halves = rng.permuted(np.tile(np.arange(tables.n_clusters) % 2, (n_splits, 1)), axis=1)
    estimates = refit_weighted(tables, np.concatenate([halves, 1 - halves]).astype(float), basis)[:, :7]
    return [float(np.corrcoef(x, y)[0, 1]) for x, y in zip(estimates[:n_splits], estimates[n_splits:], strict=True)]


def test_split_halves_drawn_once_for_every_question_give_each_the_value_it_draws_alone():
    data = paper_design(np.random.default_rng(14), abilities=np.linspace(0, 0.6, 7), repetitions=3)
    before = np.mean(_split_half_as_drawn_before(data.winners, data.losers, data.judges, np.random.default_rng(7), 20))
    alone = bt.split_half(data.winners, data.losers, data.judges, 7, 0, np.random.default_rng(7), n_splits=20)
    assert alone.mean_correlation == before
    draws, n_judges = SplitDraws(), len(np.unique(data.judges))
    for _ in range(3):  # three questions over the same judges, each with a generator seeded alike
        rng = np.random.default_rng(7)
        halves = draws.halves(rng, n_clusters=n_judges, n_splits=20)
        shared = bt.split_half(data.winners, data.losers, data.judges, 7, 0, rng, n_splits=20, halves=halves)
        assert shared == alone
        drawn_alone = np.random.default_rng(7)
        bt.split_halves(drawn_alone, n_judges, 20)
        assert rng.random() == drawn_alone.random()  # the generator is left where drawing leaves it


def test_split_halves_of_fractional_counts_agree_with_the_whole_ones_they_scale():
    data = paper_design(np.random.default_rng(15), abilities=np.linspace(0, 0.6, 7), repetitions=3)
    common = dict(n_splits=12)
    whole = bt.split_half(data.winners, data.losers, data.judges, 7, 0, np.random.default_rng(8), **common)
    halved = bt.split_half(
        data.winners,
        data.losers,
        data.judges,
        7,
        0,
        np.random.default_rng(8),
        counts=np.full(len(data.winners), 0.5),
        **common,
    )
    assert halved.mean_correlation == pytest.approx(whole.mean_correlation, abs=1e-9)
    assert halved.n_splits == whole.n_splits


@pytest.mark.parametrize("per_judge", [1, 4])
def test_clusters_collapse_into_patterns_exactly_when_their_count_vectors_are_equal(per_judge):
    from scipy import sparse

    from analysis.bradley_terry.resampling.patterns import _rows_equal, identical_clusters

    rng = np.random.default_rng(16)
    judges = 20_000  # COLLAPSE_FROM; one comparison each: 42 vectors, four each: thousands
    pairs = np.array([(a, b) for a in range(7) for b in range(7) if a != b])
    winners, losers = pairs[rng.integers(0, len(pairs), judges * per_judge)].T
    table = bt.cluster_tables(winners, losers, 7, np.repeat(np.arange(judges), per_judge))
    collapsed = identical_clusters(table)
    vectors = np.unique(sparse.hstack([table.wins, table.totals]).toarray(), axis=0)
    if len(vectors) * 4 > judges:
        assert collapsed is None
    else:
        assert collapsed is not None
        assert collapsed[1].sum() == judges
        assert len(collapsed[1]) == len(vectors)
    # The check, against the difference of the rows, with explicit zeros and blocks of a few rows.
    counts = sparse.random(50, 9, density=0.3, format="csr", random_state=1)
    counts.data[::4] = 0.0
    for others in (np.arange(50), np.r_[np.arange(49), 0], np.zeros(50, int)):
        differs = bool((counts - counts[others]).count_nonzero())
        assert _rows_equal(counts.copy(), others, rows=7) is not differs
