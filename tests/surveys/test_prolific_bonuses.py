"""Bonuses on Prolific from the study admin, per participant or from a CSV: Prolific sets them up, the page shows its
figures with the total including fees, and the Pay button pays once. Against the fake Prolific API over real HTTP
(tests/fakes/prolific_server.py), through the Django test client."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from surveys.models import AuditEvent, BonusPayment, Participant, StudyMembership
from tests.conftest import make_study


@pytest.fixture
def study(db, prolific):
    study = make_study(prolific_study_id="st1", prolific_currency="GBP")
    prolific.add_study("st1", status="ACTIVE", reward=150)
    for name in ("a", "b", "c"):
        Participant.objects.create(
            study=study, prolific_pid=f"pid-{name}", session_id=f"sub-{name}", status=Participant.Status.COMPLETED
        )
        prolific.add_submission(f"sub-{name}", participant_id=f"pid-{name}", study_id="st1", status="APPROVED")
    return study


def page_url(study) -> str:
    return reverse("admin:surveys_study_bonuses", args=[study.pk])


def pay_form_action(page: str) -> str:
    [action] = re.findall(r'<form method="post" action="([^"]+/pay/)"', page)
    return action


def test_bonuses_from_a_csv_show_prolifics_total_with_fees_then_are_paid_once(client, researcher, study, prolific):
    upload = SimpleUploadedFile("bonuses.csv", b"participant_id,amount\npid-a,1.50\npid-b,0.75\n")
    page = client.post(page_url(study), {"file": upload, "reason": "top quartile"}).content.decode()

    # Set up, not paid: Prolific's own figures (its fee is 33.33 % in the fake), the total including them.
    assert "Nothing has been paid" in page
    assert '<th scope="row">To participants</th><td>£2.25</td>' in page
    assert '<th scope="row">Prolific&#x27;s fee</th><td>£0.75</td>' in page
    assert "Total, taken from your Prolific balance</th><td>£3.00</td>" in page
    assert 'value="Pay £3.00"' in page
    [setup] = prolific.calls_to("/submissions/bonus-payments/")
    assert setup.body == {"study_id": "st1", "csv_bonuses": "pid-a,1.50\npid-b,0.75\n"}
    assert prolific.bonuses_paid == []
    assert not AuditEvent.objects.exists()

    done = client.post(pay_form_action(page), follow=True).content.decode()
    assert "Bonuses paid on Prolific: 2 participants, £2.25 to them, £3.00 with Prolific&#x27;s fee and VAT" in done
    payment = BonusPayment.objects.get()
    assert [(pid, pence) for _, pid, pence in prolific.bonuses_paid] == [("pid-a", 150), ("pid-b", 75)]
    assert payment.status == BonusPayment.Status.PAID
    assert (payment.amount, payment.fees, payment.total, payment.reason) == (225, 75, 300, "top quartile")
    event = AuditEvent.objects.get()
    assert (event.action, event.username) == (AuditEvent.Action.PROLIFIC_BONUSES_PAID, "res")
    assert event.details["bonuses"] == {"pid-a": 150, "pid-b": 75}

    # The button again (a double click, a second tab): Prolific would pay again, so it is not asked.
    again = client.post(pay_form_action(page), follow=True).content.decode()
    assert "cannot be paid from here: it is paid" in again
    assert len(prolific.calls_to("/pay/")) == 1


def test_per_participant_the_chosen_pids_are_filled_in_with_one_amount_for_all(client, researcher, study, prolific):
    chosen = Participant.objects.filter(prolific_pid__in=["pid-a", "pid-c"])
    response = client.post(
        reverse("admin:surveys_participant_changelist"),
        {"action": "pay_bonus_to_participants", "_selected_action": [p.pk for p in chosen]},
        follow=True,
    )
    form = response.content.decode()
    assert "pid-a\npid-c" in form

    page = client.post(page_url(study), {"lines": "pid-a\npid-c\n", "amount_each": "0.50"}).content.decode()
    assert "Total, taken from your Prolific balance</th><td>£1.33</td>" in page  # £1.00 + 33.33 % fee
    assert prolific.calls_to("/submissions/bonus-payments/")[0].body["csv_bonuses"] == "pid-a,0.50\npid-c,0.50\n"


def test_wrong_lines_are_named_and_nothing_reaches_prolific(client, researcher, study, prolific):
    page = client.post(page_url(study), {"lines": "pid-a,1.50\nstranger,1\npid-a,2\npid-b,0.005\n"}).content.decode()
    assert "Nothing was set up or paid" in page
    assert "line 2 (stranger): not a Prolific participant of this study." in page
    assert "line 3 (pid-a): given twice" in page
    assert "line 4 (pid-b): the amount must be positive with at most two decimals" in page
    assert prolific.calls == []


def test_a_large_amount_is_flagged_as_perhaps_pence_typed_as_pounds(client, researcher, study):
    page = client.post(page_url(study), {"lines": "pid-a,30"}).content.decode()
    assert "pid-a gets £30.00: Prolific reads the amount in GBP, so 30 pays £30.00, not £0.30." in page


def test_an_unclear_answer_while_paying_is_never_paid_again_from_here(client, researcher, study, prolific):
    page = client.post(page_url(study), {"lines": "pid-a,1"}).content.decode()
    prolific.fail_next(500, path="/pay/")
    said = client.post(pay_form_action(page), follow=True).content.decode()
    assert "check the payments on Prolific" in said
    assert BonusPayment.objects.get().status == BonusPayment.Status.UNCERTAIN
    client.post(pay_form_action(page))
    assert len(prolific.calls_to("/pay/")) == 1  # the 500 was not tried again: it may have paid


def test_a_viewer_of_the_study_cannot_pay_bonuses(client, study, prolific, django_user_model):
    viewer = django_user_model.objects.create_user("viewer", password="pw-for-tests-1", is_staff=True)
    StudyMembership.objects.create(study=study, user=viewer, role=StudyMembership.Role.VIEWER)
    client.force_login(viewer)
    assert client.post(page_url(study), {"lines": "pid-a,1"}).status_code in (403, 404)
    assert prolific.calls == []
