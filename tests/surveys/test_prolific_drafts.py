"""The Prolific draft built from the design (surveys/prolific/drafts/): places, reward, codes and their
actions, and the calls against the fake Prolific server on 127.0.0.1."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db.models import F

from surveys.models import Cell, Study
from surveys.prolific import drafts
from surveys.prolific.client import ProlificError
from surveys.services.freezing import copy_as_draft
from surveys.services.lifecycle import go_live
from tests.conftest import make_study

pytestmark = pytest.mark.django_db
URL = "https://judge.example.org/s/s1/"


def coded_study(**design):
    design.setdefault("completion_code", "DONE1")
    design.setdefault("failed_attention_code", "ATTN1")
    design.setdefault("no_consent_code", "NOCON1")
    design.setdefault("screened_out_code", "FULL1")
    return make_study(description="Compare two answers to a moral dilemma.", **design)


def test_places_are_cells_times_repetitions_over_vignettes_per_judge_plus_the_margin():
    # 3 systems: 3 pairs on each of 3 vignettes = 9 cells; 9 × 8 ÷ 3 = 24 judges; + 10 % = 26.4 → 27.
    study = coded_study(repetitions=8, vignettes_per_participant=3, prolific_margin_percent=10)
    places = drafts.planned_places(study)
    assert (places.cells, places.judges, places.total) == (9, 24, 27)
    assert "9 cells × 8 repetitions ÷ 3 vignettes per judge = 24 judges, + 10% margin" in str(places)


def test_a_live_study_counts_its_cells_and_rounds_judges_up():
    study = go_live(study=coded_study(repetitions=5, vignettes_per_participant=2, prolific_margin_percent=0))
    assert Cell.objects.filter(study=study).count() == 9
    assert drafts.planned_places(study).total == 23  # 45 judgments ÷ 2 per judge = 22.5 → 23


def test_the_reward_pays_the_hourly_rate_for_the_estimated_minutes_rounded_up_to_a_penny():
    # The design's estimate: 90 s + 3 pairs × (100 s + 5 questions × 10 s) = 540 s = 9 minutes.
    study = coded_study(vignettes_per_participant=3, prolific_hourly_rate=Decimal("9.00"))
    draft = drafts.build_draft(study=study, study_url=URL)
    assert (draft.minutes, draft.minutes_from) == (9, "the design")
    assert draft.reward == 135
    assert draft.reward_text == "£1.35"
    assert draft.hourly_rate == Decimal("9.00")
    assert drafts.reward_for(hourly_rate=Decimal("10.00"), minutes=7) == 117  # 116.67 pence, up
    assert not [w for w in draft.warnings if "per hour" in w]


@pytest.mark.parametrize(
    ("currency", "rate", "expected"),
    [
        ("GBP", "8.00", "below Prolific's recommended £9.00"),
        ("GBP", "5.00", "below Prolific's minimum of £6.00: Prolific will refuse the study"),
        ("USD", "10.00", "below Prolific's recommended $12.00"),
        ("USD", "7.50", "below Prolific's minimum of $8.00"),
    ],
)
def test_rates_below_prolifics_minimum_or_recommended_are_warned_about(currency, rate, expected):
    study = coded_study(prolific_currency=currency, prolific_hourly_rate=Decimal(rate))
    warnings = drafts.build_draft(study=study, study_url=URL).warnings
    assert any(expected in warning for warning in warnings), warnings


def test_the_minimum_and_recommended_rates_are_settings(settings):
    settings.PROLIFIC_HOURLY_RATES = {"GBP": {"minimum": Decimal("7.00"), "recommended": Decimal("10.00")}}
    warnings = drafts.rate_warnings(currency="GBP", hourly_rate=Decimal("6.50"))
    assert warnings == [
        "the reward pays £6.50 per hour, below Prolific's minimum of £7.00: Prolific will refuse the study"
    ]


@pytest.mark.parametrize(
    ("policy", "completed", "failed"),
    [
        (Study.InvalidPolicy.ASK_RETURN, "MANUALLY_REVIEW", "REQUEST_RETURN"),
        (Study.InvalidPolicy.REJECT, "MANUALLY_REVIEW", "MANUALLY_REVIEW"),  # rejection goes through the review
        (Study.InvalidPolicy.APPROVE, "AUTOMATICALLY_APPROVE", "AUTOMATICALLY_APPROVE"),
    ],
)
def test_each_code_gets_the_action_its_policy_says_and_no_consent_or_full_are_never_rejected(policy, completed, failed):
    codes = drafts.code_actions(coded_study(invalid_policy=policy))
    actions = {c["code"]: (c["code_type"], [a["action"] for a in c["actions"]]) for c in codes}
    assert actions == {
        "DONE1": ("COMPLETED", [completed]),
        "ATTN1": ("FAILED_ATTENTION_CHECK", [failed]),
        "NOCON1": ("NO_CONSENT", ["REQUEST_RETURN"]),
        "FULL1": ("OTHER", ["REQUEST_RETURN"]),
    }


def test_a_study_without_a_completion_code_or_with_a_shared_code_is_not_sent(prolific):
    study = coded_study(completion_code="", failed_attention_code="SAME", no_consent_code="SAME")
    draft = drafts.build_draft(study=study, study_url=URL)
    assert any("no completion code" in p for p in draft.problems)
    assert any("share a completion code" in p for p in draft.problems)
    with pytest.raises(ValidationError, match="was not sent to Prolific"):
        drafts.send_draft(study=study, study_url=URL)
    assert prolific.calls == []


def test_a_server_error_on_create_is_not_retried_so_no_second_study_appears(prolific):
    study = coded_study()
    prolific.fail_next(500, path="/studies/")
    with pytest.raises(ProlificError, match="answered 500"):
        drafts.send_draft(study=study, study_url=URL)
    assert len(prolific.calls_to("/studies/")) == 1
    study.refresh_from_db()
    assert (study.prolific_study_id, study.prolific_status) == ("", "")


def test_a_429_on_create_is_tried_again_because_prolific_did_nothing(prolific):
    study = coded_study()
    prolific.fail_next(429, retry_after="0", path="/studies/")
    sent = drafts.send_draft(study=study, study_url=URL)
    assert len(prolific.calls_to("/studies/")) == 2
    assert list(prolific.studies) == [sent.prolific_id]


def test_places_needed_are_the_open_cells_judges_less_what_prolific_has_left(prolific):
    study = go_live(study=coded_study(repetitions=2, vignettes_per_participant=3, prolific_margin_percent=0))
    study.prolific_study_id, study.prolific_link = "a" * 24, Study.ProlificLink.CREATED
    study.save()
    # Every cell filled, then returns leave 7 judgments open on the three vignettes.
    Cell.objects.filter(study=study).update(completed=F("target"))
    for cell in Cell.objects.filter(study=study)[:7]:
        Cell.objects.filter(pk=cell.pk).update(completed=F("target") - 1)
    prolific.add_study("a" * 24, status="ACTIVE", total_available_places=6, places_taken=5)

    needed = drafts.places_needed(study=study)

    assert (needed.open_places, needed.judges, needed.prolific_left, needed.to_add) == (7, 3, 1, 2)
    drafts.add_places(study=study)
    assert prolific.studies["a" * 24]["total_available_places"] == 8
    with pytest.raises(ValidationError, match="needs no more places"):
        drafts.add_places(study=study)  # the two added places now cover the open cells


def test_a_copy_of_the_study_gets_a_prolific_study_of_its_own(prolific):
    study = coded_study(prolific_study_id="b" * 24, prolific_status="ACTIVE")
    copy = copy_as_draft(study=study)
    assert (copy.prolific_study_id, copy.prolific_status) == ("", "")
    assert copy.prolific_hourly_rate == study.prolific_hourly_rate  # the pay settings come along
