"""One set of judge weights for every question (a joint bootstrap): `shared_resample` and the refit's
`resample_participants`, which the participant bootstrap and the two-way bootstrap's judge part share."""

import numpy as np
from numpy.testing import assert_allclose

from analysis import bradley_terry as bt
from analysis.bradley_terry.resampling import refit_replicates
from analysis.services.fitting import DEFAULT_PARAMETERS
from analysis.services.participant_draws import resample_participants
from analysis.services.reading import QuestionData


def two_questions(seed=1):
    """The same judges (codes 0..n-1) on two questions with different abilities."""
    rng = np.random.default_rng(seed)
    questions = []
    for abilities in (np.linspace(0, 0.6, 5), np.linspace(0.4, 0, 5)):
        data = bt.simulate_judgments(abilities, vignettes=6, repetitions=6, rng=rng)
        questions.append(data)
    assert np.array_equal(np.unique(questions[0].judges), np.unique(questions[1].judges))
    return questions


def tables_of(questions, *, counts=None):
    """Per question: its full fit, its sparse per-judge tables (`bootstrap`'s) and its dense table."""
    judges = np.unique(np.concatenate([q.judges for q in questions]))
    prepared = []
    for q in questions:
        common = dict(reference=0, counts=None if counts is None else counts[: len(q.winners)])
        codes = np.searchsorted(judges, q.judges)
        basis, (table,) = bt.prepare_tables(
            q.winners, q.losers, 5, clusterings=[codes], n_clusters=len(judges), **common
        )
        _, dense = bt.prepare_dense_table(q.winners, q.losers, 5, clusters=codes, n_clusters=len(judges), **common)
        prepared.append((basis, table, dense))
    return prepared, len(judges)


def redrawn(seed, n, n_boot, *, weights="multinomial"):
    """The weights shared_resample documents: one replicate after the other."""
    rng = np.random.default_rng(seed)
    if weights == "poisson":
        return np.array([rng.poisson(1.0, size=n) for _ in range(n_boot)], float)
    return np.array([np.bincount(rng.integers(0, n, size=n), minlength=n) for _ in range(n_boot)], float)


def test_every_table_is_refitted_on_the_judges_each_replicate_draws_as_documented():
    prepared, n = tables_of(two_questions())
    bases, sparse_tables, dense = zip(*prepared, strict=True)
    shared = bt.shared_resample(dense, list(bases), rng=np.random.default_rng(3), n_boot=30)
    weights = redrawn(3, n, 30)
    for basis, table, estimates in zip(bases, sparse_tables, shared, strict=True):
        assert_allclose(estimates, refit_replicates(table, [weights], basis), atol=1e-12, equal_nan=True)


def test_small_chunks_and_poisson_weights_follow_the_same_documented_draws():
    prepared, n = tables_of(two_questions(2))
    bases, sparse_tables, dense = zip(*prepared, strict=True)
    common = dict(n_boot=12, weights="poisson")
    at_once = bt.shared_resample(dense, list(bases), rng=np.random.default_rng(4), **common)
    by_two = bt.shared_resample(dense, list(bases), rng=np.random.default_rng(4), memory_budget=2 * 2 * n, **common)
    for a, b in zip(at_once, by_two, strict=True):
        assert_allclose(a, b, atol=1e-12, equal_nan=True)
    weights = redrawn(4, n, 12, weights="poisson")
    assert_allclose(at_once[0], refit_replicates(sparse_tables[0], [weights], bases[0]), atol=1e-12, equal_nan=True)


def test_fractional_counts_are_weighed_exactly_too():
    questions = two_questions(5)
    counts = np.random.default_rng(6).uniform(0.5, 2.0, max(len(q.winners) for q in questions))
    prepared, n = tables_of(questions, counts=counts)
    bases, sparse_tables, dense = zip(*prepared, strict=True)
    assert dense[0].counts.dtype == np.float64
    shared = bt.shared_resample(dense, list(bases), rng=np.random.default_rng(7), n_boot=10)
    weights = redrawn(7, n, 10)
    assert_allclose(shared[1], refit_replicates(sparse_tables[1], [weights], bases[1]), atol=1e-10, equal_nan=True)


def as_question(key, data):
    return QuestionData(
        key,
        key,
        winners=data.winners,
        losers=data.losers,
        first=data.first,
        clusters=data.judges + 1000,  # participant ids, not codes
        vignettes=data.vignettes,
        style=np.zeros(len(data.winners)),
    )


def test_questions_with_the_same_judgments_get_the_same_intervals_and_a_seed_repeats_them():
    data = two_questions(8)[0]
    parameters = DEFAULT_PARAMETERS | {"bootstrap": 50}
    common = dict(n_items=5, reference=0, parameters=parameters)
    first, second = resample_participants([as_question("a", data), as_question("b", data)], **common)
    assert_allclose(first.estimates, second.estimates, atol=1e-12, equal_nan=True)  # the same judges drawn
    (again,) = resample_participants([as_question("a", data)], **common)
    assert_allclose(again.estimates, first.estimates, atol=1e-12, equal_nan=True)  # same seed, same numbers
    other = resample_participants([as_question("a", data)], **common | {"parameters": parameters | {"seed": 1}})
    assert not np.allclose(other[0].estimates, first.estimates, equal_nan=True)


def test_a_question_with_one_judge_has_no_replicates_and_the_others_keep_theirs():
    data = two_questions(9)[0]
    lone = data.judges == data.judges[0]
    single = QuestionData(
        "one",
        "one",
        data.winners[lone],
        data.losers[lone],
        data.first[lone],
        data.judges[lone],
        data.vignettes[lone],
        np.zeros(lone.sum()),
    )
    parameters = DEFAULT_PARAMETERS | {"bootstrap": 20}
    drawn = resample_participants([single, as_question("a", data)], n_items=5, reference=0, parameters=parameters)
    assert drawn[0].estimates is None
    assert drawn[1].estimates.shape[0] == 20


def test_the_two_way_bootstrap_takes_the_judge_replicates_it_is_given():
    """Given the judge replicates it would have drawn first, it draws only the vignettes and cells."""
    data = two_questions(10)[0]
    common = dict(reference=0, judges=data.judges, vignettes=data.vignettes, n_boot=100)
    drawn = bt.two_way_bootstrap(data.winners, data.losers, 5, rng=np.random.default_rng(12), **common)
    rng = np.random.default_rng(12)
    judges_only = bt.bootstrap(data.winners, data.losers, 5, reference=0, clusters=data.judges, rng=rng, n_boot=100)
    given = bt.two_way_bootstrap(data.winners, data.losers, 5, rng=rng, judge_estimates=judges_only.estimates, **common)
    assert_allclose(given.se, drawn.se, atol=1e-12, equal_nan=True)
    assert given.n_failed == drawn.n_failed


def test_clusters_drawn_narrow_are_the_numbers_numpy_draws_for_integers():
    from analysis.bradley_terry.resampling.shared import _drawn_clusters

    for n in (1, 2, 7, 40_000):
        drawn = _drawn_clusters(np.random.default_rng(n), n)
        assert drawn.dtype == np.intp
        assert np.array_equal(drawn, np.random.default_rng(n).integers(0, n, size=n))
