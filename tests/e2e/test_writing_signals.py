"""The writing page's own script in Chromium: an answer pasted in whole is rated low, a typed one high."""

import json
import random

import pytest

from surveys.models import Answer, RespondentTask
from surveys.services.authenticity import rate, summary
from surveys.services.authenticity_report import content_checks
from tests.e2e.writers import write_as
from tests.surveys.test_respondents import PID, STUDY_ID, answering_study


def written_as(live_server, browser, study, *, kind: str, pid: str, sources: dict | None = None) -> Answer:
    rng = random.Random(7)
    write_as(
        browser, base=live_server.url, slug=study.slug, pid=pid, study_id=STUDY_ID, kind=kind, rng=rng, sources=sources
    )
    return RespondentTask.objects.get(respondent__prolific_pid=pid).answer


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_pasted_answer_is_rated_low_and_a_typed_one_high(live_server, chromium_browser):
    study = answering_study(m=1)
    pasted = written_as(live_server, chromium_browser, study, kind="paster", pid=PID)
    assert pasted.authenticity == "low"
    action = pasted.writing_signals["fields"]["action"]
    assert action["pastes"] == 1
    assert action["pasted_chars"] == action["chars"] > 0

    typed = written_as(live_server, chromium_browser, study, kind="typist", pid="5f1e0c7a9b3d2e4f6a8b0c1e")
    assert typed.authenticity == "high"
    action = typed.writing_signals["fields"]["action"]
    assert action["pastes"] == 0
    assert action["keys"] >= action["chars"] > 0
    assert typed.writing_signals["page"]["first_key_to_submit_ms"] > 0


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_phone_keyboards_dictation_ime_and_moving_ones_own_text_are_rated_as_typing(live_server, chromium_browser):
    study = answering_study(m=1)
    for n, kind in enumerate(("swipe", "dictation", "ime", "autocorrect", "reviser")):
        answer = written_as(live_server, chromium_browser, study, kind=kind, pid=f"{n + 1:024x}")
        action = answer.writing_signals["fields"]["action"]
        assert action["pastes"] == 0, kind
        if kind == "reviser":  # its own text moved from another box: neither typed here nor pasted
            assert action["moved_chars"] == action["chars"] > 0
        else:
            assert action["typed_chars"] >= action["chars"] > 0, kind
            assert action["inserted_chars"] == 0, kind  # a word at a time, or a composition grown word by word
        assert answer.authenticity == "high", kind
        if kind in ("swipe", "dictation", "ime"):
            # Keydowns alone do not explain what these input methods wrote: counted by keys only, they were low.
            assert action["keys"] < action["chars"] / 2, kind
            keys_only = {name: {**f, "typed_chars": 0} for name, f in answer.writing_signals["fields"].items()}
            assert rate({**answer.writing_signals, "fields": keys_only}) == "low", kind


SCENARIO = (
    "Marcus is walking home from a late shift when he spots a wallet lying in the gutter. Inside are four "
    "hundred dollars in cash, a driver's licence, and a photo of two small children."
)


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_words_quoted_from_the_scenario_on_the_page_are_a_quotation_not_a_paste(live_server, chromium_browser):
    study = answering_study(m=1)
    study.vignettes.update(text=SCENARIO)
    answer = written_as(live_server, chromium_browser, study, kind="quoter", pid=PID)
    feature, reason = (answer.writing_signals["fields"][name] for name in ("feature_1", "reason_1"))
    assert feature["pastes"] == reason["pastes"] == 0
    assert feature["quoted_chars"] == feature["chars"] > 0  # the whole feature is the scenario's words
    assert reason["quoted_chars"] > 0
    assert answer.features.first().feature in SCENARIO  # what was pasted is the scenario's own text
    assert "Marcus" not in json.dumps(answer.writing_signals)  # counted, never kept
    assert answer.authenticity == "high"


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_field_inserted_whole_by_one_input_event_is_untyped_whatever_its_input_type(live_server, chromium_browser):
    study = answering_study(m=1)
    for n, kind in enumerate(("one-shot", "filled-in", "dropper")):
        answer = written_as(live_server, chromium_browser, study, kind=kind, pid=f"{n + 1:024x}")
        action = answer.writing_signals["fields"]["action"]
        assert action["typed_chars"] == 0, kind
        if kind == "dropper":  # Chromium's own drop, counted with the pastes
            assert action["pastes"] == 1, kind
            assert action["pasted_chars"] == action["chars"] > 0, kind
        else:
            assert action["pastes"] == 0, kind
            assert action["inserted_chars"] == action["chars"] > 0, kind
        assert answer.authenticity == "low", kind


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_a_brief_typed_answer_is_high_and_its_rhythm_is_a_persons(live_server, chromium_browser):
    answer = written_as(live_server, chromium_browser, answering_study(m=1), kind="brief", pid=PID)
    totals = summary(answer.writing_signals)
    assert totals["chars"] < 150
    assert totals["key_intervals"] >= 50
    assert totals["key_interval_cv"] > 0.5  # uneven, as people's typing is
    assert answer.authenticity == "high"


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_an_answer_typed_out_at_a_machines_steady_speed_is_low(live_server, chromium_browser):
    answer = written_as(live_server, chromium_browser, answering_study(m=1), kind="constant", pid=PID)
    totals = summary(answer.writing_signals)
    assert totals["keys"] >= totals["chars"]  # every character typed by a key: the shares see nothing
    assert totals["untyped_share"] == totals["pasted_share"] == 0
    assert totals["key_interval_cv"] < 0.1
    assert totals["corrections"] == 0
    assert answer.authenticity == "low"


def llm_sources(study) -> dict[str, list[dict]]:
    """{scenario text: its LLM answer as a study file holds it}: what a cheat copies from a chatbot."""
    sources = {}
    for answer in Answer.objects.for_study(study).filter(system__kind="llm").select_related("vignette"):
        features = [{"feature": f.feature, "weight": f.weight, "reason": f.reason} for f in answer.features.all()]
        source = {
            "features": features,
            "action": answer.action,
            "additional_information": answer.additional_information,
        }
        sources.setdefault(answer.vignette.text, []).append(source)
    return sources


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_an_llm_answer_retyped_with_a_persons_timing_passes_as_typing_but_the_content_check_finds_it(
    live_server, chromium_browser
):
    study = answering_study(m=1)
    answer = written_as(live_server, chromium_browser, study, kind="retyper", pid=PID, sources=llm_sources(study))
    assert answer.authenticity == "high"  # what behaviour cannot tell (docs/authenticity.md)
    check = content_checks(study)[answer.pk]
    assert check.llm.answer.system.key == "gpt"
    assert check.llm.near_duplicate
