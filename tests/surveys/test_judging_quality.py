"""Quality flags at the end of the survey: each raised with its reason, most serious first."""

import pytest

from surveys.models import Participant
from surveys.services.judging import MEDIAN_NEEDS, assess_quality, median_seconds
from tests.conftest import make_study

GOOD = dict(
    anonymised_consent=True,
    attention_choice=2,
    positions=["first", "second", "first"],
    seconds_total=600.0,
    minimum_seconds=120,
    fast_fraction=0.3,
    median_seconds=None,
)


def codes(**changes):
    return [flag["code"] for flag in assess_quality(**{**GOOD, **changes})]


def test_a_careful_participant_raises_no_flag():
    assert codes() == []


def test_each_rule_raises_its_own_flag_in_order_of_seriousness():
    assert codes(anonymised_consent=False) == ["no-anonymised-consent"]
    assert codes(attention_choice=1) == ["failed-attention"]
    assert codes(positions=["second"] * 25) == ["straight-lining"]
    assert codes(seconds_total=100) == ["too-fast"]
    assert codes(anonymised_consent=False, attention_choice=1, positions=["first"] * 3, seconds_total=1) == [
        "no-anonymised-consent",
        "failed-attention",
        "straight-lining",
        "too-fast",
    ]


def test_too_fast_is_also_judged_against_the_studys_own_median():
    assert codes(seconds_total=200, median_seconds=1000) == ["too-fast"]  # under 30% of 1000 s
    assert codes(seconds_total=400, median_seconds=1000) == []
    reason = assess_quality(**{**GOOD, "seconds_total": 200, "median_seconds": 1000})[0]["reason"]
    assert "30% of the median 1000 s" in reason


@pytest.mark.django_db
def test_the_median_counts_only_finished_real_participants_and_waits_for_enough_of_them():
    study = make_study()
    for n in range(MEDIAN_NEEDS - 1):
        Participant.objects.create(study=study, prolific_pid=f"p{n}", status="completed", seconds_total=100 * (n + 1))
    Participant.objects.create(study=study, prolific_pid="pv", status="completed", seconds_total=9, is_preview=True)
    Participant.objects.create(study=study, prolific_pid="js", status="judging", seconds_total=9)
    assert median_seconds(study=study) is None
    Participant.objects.create(study=study, prolific_pid="last", status="failed-attention", seconds_total=500)
    assert median_seconds(study=study) == 300
