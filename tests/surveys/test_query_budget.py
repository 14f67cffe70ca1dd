"""A finished judge's SQL statements stay within the recorded budget (benchmarks/queries.py measures them).

The budget (tests/fixtures/query_budget.json) holds, per request type of the judging survey, the most
statements one request may send to PostgreSQL, BEGIN and COMMIT included, and the total per judge.
A change that adds statements to a participant's page fails here; after a deliberate change, rerun
`python benchmarks/queries.py --record` and commit the new budget with the reason.
"""

import json

import pytest

from benchmarks.queries import BUDGET_FILE, STEPS, build_study, statements_per_step, walk_one_judge, warm

PER_JUDGE_LIMIT = 60  # issue 24: a finished judge costs the database at most 60 statements


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_no_step_of_a_finished_judge_sends_more_statements_than_its_budget():
    budget = json.loads(BUDGET_FILE.read_text(encoding="utf-8"))
    study = build_study()
    walk_one_judge(study, 1)
    warm(study)  # this process has read the live study, as a web process serving it has
    measured = statements_per_step(walk_one_judge(study, 2))
    over = {step: (measured[step], budget[step]) for step in [*STEPS, "per judge"] if measured[step] > budget[step]}
    assert not over, f"statements (measured, budget) above the budget: {over}"
    assert budget["per judge"] <= PER_JUDGE_LIMIT
