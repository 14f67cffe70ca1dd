"""Exactly-once, guard by guard: each test fails when the one guard it names is taken out of
llm_collect/calls/states.py (the claim, the held-row filter, the lease renewal) — checked by removing each one.

The rows are claimed and moved directly, as two workers would, without a provider: what is asserted is who may
change the row, and that nothing else changes it.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from llm_collect.calls.calling import give_up
from llm_collect.calls.states import ask_again, claim, move, renew
from llm_collect.models import Generation
from llm_judging.models import JudgeCall

from .conftest import make_llm_study

pytestmark = pytest.mark.django_db
CAP = 5


@pytest.fixture
def rows(fake):
    """Two pending Generations of one study (made directly: no run, no message)."""
    study = make_llm_study(url=fake.url, vignettes=2)
    system = study.systems.get(kind="llm")
    return [Generation.objects.create(system=system, vignette=v, sample=1) for v in study.vignettes.all()]


def fresh(row):
    return type(row).objects.get(pk=row.pk)


def held_by_other_worker(row, *, lease_seconds=300):
    token = claim(row, lease_seconds=lease_seconds, max_attempts=CAP)
    assert token
    return token, fresh(row)


def test_a_pending_row_is_claimed_once_and_counts_the_attempt(rows):
    token = claim(rows[0], lease_seconds=30, max_attempts=CAP)
    row = fresh(rows[0])
    assert (row.status, row.claim, row.attempts) == ("running", token, 1)
    assert row.lease_expires_at > timezone.now()


def test_guard_live_lease_a_row_another_worker_holds_is_not_claimed(rows):
    token, row = held_by_other_worker(rows[0])
    assert claim(row, lease_seconds=30, max_attempts=CAP) is None
    row = fresh(row)
    assert (row.claim, row.attempts) == (token, 1)


def test_a_row_whose_lease_ran_out_is_claimed_again_with_a_new_token(rows):
    token, row = held_by_other_worker(rows[0])
    Generation.objects.filter(pk=row.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    again = claim(fresh(row), lease_seconds=30, max_attempts=CAP)
    assert again
    assert again != token
    assert fresh(row).attempts == 2


def test_guard_attempts_cap_a_row_at_the_cap_is_not_claimed(rows):
    Generation.objects.filter(pk=rows[0].pk).update(attempts=CAP)
    assert claim(fresh(rows[0]), lease_seconds=30, max_attempts=CAP) is None
    row = fresh(rows[0])
    assert (row.status, row.attempts, row.claim) == ("pending", CAP, "")


@pytest.mark.parametrize("status", ["done", "failed", "invalid"])
def test_guard_final_state_a_finished_row_is_never_claimed(rows, status):
    Generation.objects.filter(pk=rows[0].pk).update(status=status)
    assert claim(fresh(rows[0]), lease_seconds=30, max_attempts=CAP) is None
    assert fresh(rows[0]).attempts == 0


def test_guard_this_row_only_claiming_one_row_leaves_the_others_alone(rows):
    claim(rows[0], lease_seconds=30, max_attempts=CAP)
    other = fresh(rows[1])
    assert (other.status, other.claim, other.attempts) == ("pending", "", 0)


def test_guard_fresh_token_a_worker_whose_lease_was_taken_over_cannot_store(rows):
    stale_token, row = held_by_other_worker(rows[0])
    Generation.objects.filter(pk=row.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    new_token = claim(fresh(row), lease_seconds=30, max_attempts=CAP)
    assert move(fresh(row), token=stale_token, to="done", event="answer stored") is False
    row = fresh(row)
    assert (row.status, row.claim) == ("running", new_token)


def test_guard_held_token_a_move_with_another_token_changes_nothing(rows):
    token, row = held_by_other_worker(rows[0])
    assert move(row, token="someone-else", to="done", event="answer stored") is False
    row = fresh(row)
    assert (row.status, row.claim, row.history) == ("running", token, [])


def test_guard_held_running_a_finished_row_is_not_moved_by_a_token_it_kept(rows):
    # Older rows could keep their claim token after finishing: the token alone must not move them.
    Generation.objects.filter(pk=rows[0].pk).update(status="done", claim="kept-token")
    assert move(fresh(rows[0]), token="kept-token", to="pending", event="retryable error") is False
    assert fresh(rows[0]).status == "done"


def test_guard_unheld_giving_up_never_fails_a_row_a_live_worker_holds(rows):
    token, row = held_by_other_worker(rows[0])
    Generation.objects.filter(pk=row.pk).update(attempts=CAP)
    give_up(fresh(row))
    row = fresh(row)
    assert (row.status, row.claim) == ("running", token)


def test_giving_up_fails_a_row_whose_worker_is_gone(rows):
    held_by_other_worker(rows[0])
    Generation.objects.filter(pk=rows[0].pk).update(attempts=CAP, lease_expires_at=timezone.now())
    give_up(fresh(rows[0]))
    assert fresh(rows[0]).status == "failed"


def test_guard_from_states_asking_again_leaves_a_finished_answer_alone(rows):
    Generation.objects.filter(pk=rows[0].pk).update(status="done", attempts=1)
    assert ask_again(fresh(rows[0])) is False
    assert (fresh(rows[0]).status, fresh(rows[0]).attempts) == ("done", 1)


def test_guard_renew_held_a_lost_claim_is_not_kept_alive(rows):
    stale_token, row = held_by_other_worker(rows[0], lease_seconds=1)
    lapsed = timezone.now() - timedelta(seconds=1)
    Generation.objects.filter(pk=row.pk).update(lease_expires_at=lapsed)
    new_token = claim(fresh(row), lease_seconds=1, max_attempts=CAP)
    before = fresh(row).lease_expires_at
    assert renew(row, stale_token, lease_seconds=300) is False
    assert fresh(row).lease_expires_at == before
    assert fresh(row).claim == new_token


def test_the_same_guards_hold_for_a_judge_call(judged_study_with_a_call):
    call = judged_study_with_a_call
    token = claim(call, lease_seconds=300, max_attempts=CAP)
    assert claim(fresh(call), lease_seconds=300, max_attempts=CAP) is None
    assert move(fresh(call), token="someone-else", to="done", event="judged") is False
    assert (fresh(call).status, fresh(call).claim) == ("running", token)


@pytest.fixture
def judged_study_with_a_call(fake):
    from llm_judging.services.runs import start_judging_run
    from tests.conftest import make_judged_study
    from tests.llm_judging.conftest import make_judge

    study = make_judged_study(slug="guards", participants=2)
    start_judging_run(study=study, judges=[make_judge(fake.url, study=study)], orders="one")
    return JudgeCall.objects.first()
