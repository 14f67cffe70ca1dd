"""Study integrity at the door (issue 9): a submission is a person in a session, and one client address
cannot fill a study with invented Prolific ids. Each test is an attack that worked before."""

import pytest
from django.test import Client

from surveys.models import Assignment, EntryAttempt, Judgment, Participant, Respondent
from surveys.prolific import apply_submission_status
from tests.surveys.test_judging_flow import DEMOGRAPHICS, STUDY_ID, live_study, picks, post
from tests.surveys.test_respondents import answering_study
from tests.surveys.test_respondents import entry as answering_entry

pytestmark = pytest.mark.django_db

PID = "5f0c8a1b2c3d4e5f6a7b8c9d"
FIRST_SESSION = "70aa11bb22cc33dd44ee55ff"
OTHER_SESSION = "71aa11bb22cc33dd44ee55ff"
ATTACKER = "198.51.100.7"


def hexid(n: int) -> str:
    return f"{n:024x}"


def link(study, pid, session):
    return f"/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID={STUDY_ID}&SESSION_ID={session}"


def arrive(study, pid, session, *, address="203.0.113.1", client=None):
    """Open the study link and, when let in, consent and answer the demographics: pages are allocated."""
    client = client or Client(REMOTE_ADDR=address)
    response = client.get(link(study, pid, session))
    if response.status_code != 302:
        return client, response
    response = post(client, response.url, {"consent": "yes", "anonymised": "yes"})
    return client, post(client, response.url, DEMOGRAPHICS)


def places_held(study) -> int:
    return sum(cell.completed + cell.reserved for cell in study.cells.all())


# --- 2. The entry rate limit -------------------------------------------------------------------


def test_a_flood_of_invented_ids_from_one_address_leaves_places_for_the_next_genuine_arrival(settings):
    settings.ENTRY_RATE_LIMIT = "3/10m"
    study = live_study(systems=("alpha", "beta", "gamma"), vignettes=2, vignettes_per_participant=2, repetitions=2)
    assert places_held(study) == 0
    assert sum(cell.target for cell in study.cells.all()) == 12

    answers = [arrive(study, hexid(n), hexid(1000 + n), address=ATTACKER)[1] for n in range(12)]

    assert [r.status_code for r in answers].count(429) == 9
    assert Participant.objects.count() == 3
    assert places_held(study) == 6
    refused = next(r for r in answers if r.status_code == 429).content.decode()
    assert "wait 10 minutes and open the study link again" in refused
    _, genuine = arrive(study, PID, FIRST_SESSION, address="203.0.113.50")
    assert "/pair/1/" in genuine.url  # the next genuine arrival gets work, not the screened-out code
    assert Participant.objects.get(prolific_pid=PID).status == "judging"


def test_a_refused_entry_writes_no_participant_and_reserves_nothing(settings):
    settings.ENTRY_RATE_LIMIT = "1/10m"
    study = live_study()
    assert Client(REMOTE_ADDR=ATTACKER).get(link(study, hexid(1), hexid(101))).status_code == 302

    refused = Client(REMOTE_ADDR=ATTACKER).get(link(study, hexid(2), hexid(102)))

    assert refused.status_code == 429
    assert list(Participant.objects.values_list("prolific_pid", flat=True)) == [hexid(1)]
    assert places_held(study) == 0
    assert EntryAttempt.objects.count() == 1


def test_coming_back_is_not_an_entry_and_other_addresses_count_apart(settings):
    settings.ENTRY_RATE_LIMIT = "1/10m"
    study = live_study()
    first = Client(REMOTE_ADDR=ATTACKER)
    assert first.get(link(study, PID, FIRST_SESSION)).status_code == 302
    for _ in range(3):  # the Prolific link opened again, in this browser or another: a resume
        assert first.get(link(study, PID, FIRST_SESSION)).status_code == 302
        assert Client(REMOTE_ADDR=ATTACKER).get(link(study, PID, FIRST_SESSION)).status_code == 302
    assert Client(REMOTE_ADDR="203.0.113.9").get(link(study, hexid(5), hexid(105))).status_code == 302
    assert Participant.objects.count() == 2


def test_off_switches_the_limit_off(settings):
    settings.ENTRY_RATE_LIMIT = "off"
    study = live_study()
    for n in range(6):
        assert Client(REMOTE_ADDR=ATTACKER).get(link(study, hexid(n), hexid(100 + n))).status_code == 302
    assert Participant.objects.count() == 6
    assert EntryAttempt.objects.count() == 0


def test_behind_trusted_proxies_the_forwarded_address_counts_and_what_the_client_wrote_does_not(settings):
    settings.ENTRY_RATE_LIMIT = "1/10m"
    settings.CLIENT_IP_HEADER, settings.TRUSTED_PROXIES = "X-Forwarded-For", 1
    study = live_study()
    proxy = "172.18.0.9"

    def enter(n, forwarded):
        client = Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=forwarded)
        return client.get(link(study, hexid(n), hexid(100 + n))).status_code

    assert enter(1, "203.0.113.10") == 302
    assert enter(2, "203.0.113.20") == 302  # another client behind the same proxy
    # The client invents addresses to the left; the proxy appends the one it saw.
    assert enter(3, "10.9.9.9, 203.0.113.10") == 429
    assert enter(4, "10.9.9.8, 203.0.113.10") == 429


def test_without_trusted_proxies_a_forwarded_header_is_ignored(settings):
    settings.ENTRY_RATE_LIMIT = "1/10m"
    settings.CLIENT_IP_HEADER, settings.TRUSTED_PROXIES = "", 0
    study = live_study()
    statuses = [
        Client(REMOTE_ADDR=ATTACKER, HTTP_X_FORWARDED_FOR=f"10.0.0.{n}").get(link(study, hexid(n), hexid(100 + n)))
        for n in range(3)
    ]
    assert [r.status_code for r in statuses] == [302, 429, 429]


def test_the_answer_writing_survey_is_guarded_by_the_same_limit(settings):
    settings.ENTRY_RATE_LIMIT = "2/10m"
    study = answering_study()
    codes = [
        Client(REMOTE_ADDR=ATTACKER).get(answering_entry(study, hexid(n), hexid(100 + n))).status_code for n in range(5)
    ]
    assert codes == [302, 302, 429, 429, 429]
    assert Respondent.objects.count() == 2
    # A respondent coming back through the link is no new entry.
    assert Client(REMOTE_ADDR=ATTACKER).get(answering_entry(study, hexid(0), hexid(100))).status_code == 302


# --- 1. A submission is a person in a session -------------------------------------------------------


def test_someone_elses_pid_with_another_session_gets_a_clear_page_and_writes_nothing():
    study = live_study()
    _owner, _ = arrive(study, PID, FIRST_SESSION)
    first = Participant.objects.get(prolific_pid=PID)
    before = (first.status, list(first.assignments.values_list("pk", "status", "shown_at")))

    intruder = Client()
    refused = intruder.get(link(study, PID, OTHER_SESSION))

    assert refused.status_code == 409
    assert "started in another session" in refused.content.decode()
    # Nothing to write on: the intruder's browser holds no participant.
    assert intruder.get(f"/s/{study.slug}/pair/1/").status_code == 403
    assert intruder.post(f"/s/{study.slug}/pair/1/", picks(study)).status_code == 403
    first.refresh_from_db()
    assert (first.status, list(first.assignments.values_list("pk", "status", "shown_at"))) == before
    assert Judgment.objects.count() == 0
    assert Participant.objects.count() == 1


def test_resuming_in_another_browser_needs_both_ids():
    study = live_study()
    arrive(study, PID, FIRST_SESSION)
    elsewhere = Client().get(link(study, PID, FIRST_SESSION))
    assert elsewhere.status_code == 302
    assert "/pair/1/" in elsewhere.url


@pytest.mark.parametrize("prolific_status", ["RETURNED", "TIMED-OUT"])
def test_once_prolific_ends_the_first_session_a_new_session_starts_afresh(prolific_status):
    study = live_study()
    arrive(study, PID, FIRST_SESSION)
    apply_submission_status(study=None, session_id=FIRST_SESSION, participant_id=PID, status=prolific_status)

    _, response = arrive(study, PID, OTHER_SESSION)

    assert "/pair/1/" in response.url
    sessions = dict(Participant.objects.values_list("session_id", "status"))
    assert sessions[FIRST_SESSION] in ("returned", "timed-out")
    assert sessions[OTHER_SESSION] == "judging"
    assert Assignment.objects.filter(participant__session_id=OTHER_SESSION, status="reserved").count() == 2


def test_a_finished_session_does_not_let_the_same_person_start_again():
    study = live_study()
    arrive(study, PID, FIRST_SESSION)
    assert Client().get(link(study, PID, OTHER_SESSION)).status_code == 409
