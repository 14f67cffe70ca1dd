"""Authenticity of written answers: the page's signals are checked and stored, and rated by the documented rule."""

import json

import pytest
from django.urls import reverse

from surveys.models import Answer
from surveys.services.authenticity import FIELD_COUNTS, MAX_SIGNALS_BYTES, parse_signals, rate
from tests.surveys.test_respondents import answer_post, answering_study, consented, entry, page

PAGE = {"hidden": 0, "hidden_ms": 0, "blurred": 0, "blurred_ms": 0, "first_key_to_submit_ms": 90000}


def field(keys=0, pastes=0, pasted_chars=0, focus_ms=60000, **more):
    """One field's counts as the page sends them; `more` sets any other count (0 by default)."""
    counts = dict.fromkeys(FIELD_COUNTS, 0) | {"focus_ms": focus_ms}
    counts |= {"keys": keys, "pastes": pastes, "pasted_chars": pasted_chars, **more}
    assert set(counts) == set(FIELD_COUNTS)
    return counts


def signals(fields: dict, page_counts: dict | None = None) -> str:
    return json.dumps({"v": 1, "fields": fields, "page": page_counts or PAGE})


TEXT = "x" * 200


def rated(fields: dict, page_counts: dict | None = None, texts: dict | None = None) -> str:
    return rate(parse_signals(signals(fields, page_counts), texts=texts or {"action": TEXT}))


def test_a_typed_answer_is_high():
    assert rated({"action": field(keys=230)}) == "high"


def test_an_answer_pasted_in_one_go_is_low():
    assert rated({"action": field(keys=2, pastes=1, pasted_chars=200)}) == "low"


def test_text_the_keystrokes_cannot_explain_is_low_even_without_a_paste_event():
    assert rated({"action": field(keys=40)}) == "low"


def test_text_a_phone_keyboard_dictation_or_ime_typed_is_typing_not_untyped():
    # Swipe typing or dictation: a handful of keydowns, the words inserted by the input method.
    assert rated({"action": field(keys=3, typed_chars=200)}) == "high"
    # A paste still counts as pasted whatever the input method typed around it.
    assert rated({"action": field(keys=0, typed_chars=40, pastes=1, pasted_chars=160)}) == "low"


def test_text_moved_from_the_pages_own_fields_is_the_writers_own():
    fields = {"action": field(keys=5, moved_chars=200), "additional_information": field(keys=210)}
    assert rated(fields, texts={"action": TEXT, "additional_information": "y" * 10}) == "high"


def test_words_quoted_from_the_scenario_or_question_on_the_page_are_neither_typed_nor_pasted():
    # A brief answer whose feature and part of a reason are the scenario's own words, copied from the page.
    assert rated({"action": field(keys=70, quoted_chars=40)}, texts={"action": "x" * 110}) == "high"
    # An answer that is mostly the scenario copied back says little of the writer's own.
    assert rated({"action": field(keys=60, quoted_chars=140)}) == "mixed"


def test_text_one_input_event_brought_at_once_is_untyped_however_many_keys_were_pressed_besides():
    assert rated({"action": field(keys=0, inserted_chars=200)}) == "low"
    # Half the answer typed, the other half inserted as one sentence: the keys do not explain it away.
    assert rated({"action": field(keys=130, typed_chars=100, inserted_chars=100)}) == "low"
    assert rated({"action": field(keys=170, typed_chars=150, inserted_chars=50)}) == "mixed"


def typing(*, mean_ms, sd_ms, corrections=8, focus_ms=90000, keys=230):
    """A typed field of TEXT with this rhythm: keys, corrections and the intervals between the keys."""
    return field(
        keys=keys,
        typed_chars=200,
        corrections=corrections,
        focus_ms=focus_ms,
        key_intervals=keys - 1,
        key_interval_mean_ms=mean_ms,
        key_interval_sd_ms=sd_ms,
    )


def test_a_person_s_uneven_rhythm_at_a_persons_speed_is_high():
    assert rated({"action": typing(mean_ms=260, sd_ms=240)}) == "high"
    assert rated({"action": typing(mean_ms=260, sd_ms=240, corrections=0)}) == "high"  # a careful typist


def test_a_time_sign_alone_is_mixed_never_low():
    # A machine-steady rhythm (variation 0.05), at a person's speed, with corrections: mixed.
    assert rated({"action": typing(mean_ms=200, sd_ms=10)}) == "mixed"
    # 200 characters in 12 focused seconds (17 per second), with an uneven rhythm and corrections: mixed.
    assert rated({"action": typing(mean_ms=50, sd_ms=40, focus_ms=12000)}) == "mixed"


def test_a_time_sign_beside_another_sign_is_low():
    # Machine-steady and never corrected over 230 keys: an LLM's answer typed out by a tool.
    assert rated({"action": typing(mean_ms=200, sd_ms=10, corrections=0)}) == "low"
    # Machine-steady and faster than anyone types with pauses.
    assert rated({"action": typing(mean_ms=50, sd_ms=2, focus_ms=12000)}) == "low"
    # Too fast, with a fifth of the text pasted.
    fast_paste = typing(mean_ms=50, sd_ms=40, focus_ms=15000) | {"pastes": 1, "pasted_chars": 40}
    assert rated({"action": fast_paste}) == "low"


def test_a_steady_rhythm_over_few_keys_says_nothing():
    assert (
        rated(
            {"action": typing(mean_ms=200, sd_ms=10, corrections=0, keys=40, focus_ms=20000)},
            texts={"action": "x" * 38},
        )
        == "high"
    )


def test_signals_recorded_before_typed_chars_was_counted_are_read_as_before():
    new_counts = ("typed_chars", "moved_chars", "quoted_chars", "inserted_chars", "corrections")
    new_counts += ("key_intervals", "key_interval_mean_ms", "key_interval_sd_ms")
    old = {"action": {name: value for name, value in field(keys=40).items() if name not in new_counts}}
    assert rated(old) == "low"
    assert rated({"action": {**old["action"], "keys": 230}}) == "high"


def test_one_short_pasted_phrase_in_a_typed_answer_stays_high():
    assert rated({"action": field(keys=180, pastes=1, pasted_chars=20)}) == "high"


def test_a_sizeable_paste_or_a_paste_right_after_leaving_the_page_is_mixed():
    assert rated({"action": field(keys=150, pastes=1, pasted_chars=60)}) == "mixed"
    away = {**PAGE, "hidden": 1, "hidden_ms": 40000}
    assert rated({"action": field(keys=190, pastes=1, pasted_chars=55, pasted_after_away=55)}, away) == "mixed"


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "not json",
        "[]",
        json.dumps({"v": 2, "fields": {}, "page": PAGE}),
        signals({"action": field(keys=-1)}),
        signals({"action": {**field(), "keys": "many"}}),
        signals({"action": {**field(), "typed_text": 3}}),
        signals({"password": field()}),
        signals({"action": field()}, {**PAGE, "hidden_ms": 1e12}),
        signals({"action": field()}, {"hidden": 1}) + " " * MAX_SIGNALS_BYTES,
    ],
)
def test_missing_or_malformed_signals_are_unknown_never_low(raw):
    assert parse_signals(raw, texts={"action": TEXT}) is None
    assert rate(None) == "unknown"


def test_the_server_adds_each_fields_final_length_and_leaves_out_empty_fields():
    checked = parse_signals(
        signals({"action": field(keys=12)}), texts={"action": "Tell the truth", "additional_information": ""}
    )
    assert checked["fields"] == {"action": field(keys=12) | {"chars": 14}}


@pytest.mark.django_db
def test_a_page_sent_without_javascript_stores_the_answer_with_unknown_signals(client):
    study = answering_study(m=1)
    consented(client, study)
    assert client.post(page(study, 1), answer_post()).status_code == 302
    answer = Answer.objects.get(origin=Answer.Origin.RESPONDENT)
    assert answer.writing_signals is None
    assert answer.authenticity == "unknown"


@pytest.mark.django_db
def test_a_page_with_the_scripts_signals_stores_them_and_the_rating(client):
    study = answering_study(m=1)
    consented(client, study)
    post = answer_post()
    pasted = {"action": field(keys=0, pastes=1, pasted_chars=len(post["action"]))}
    pasted |= {name: field(pastes=1, pasted_chars=len(post[name])) for name in ("reason_1", "reason_2")}
    assert client.post(page(study, 1), post | {"writing_signals": signals(pasted)}).status_code == 302
    answer = Answer.objects.get(origin=Answer.Origin.RESPONDENT)
    assert answer.authenticity == "low"
    assert answer.writing_signals["fields"]["action"]["chars"] == len("Tell the truth, kindly.")


@pytest.mark.django_db
def test_the_consent_page_says_what_is_recorded_while_writing(client):
    study = answering_study(m=1)
    client.get(entry(study))
    html = client.get(reverse("surveys:answering-consent", args=[study.slug])).content.decode()
    assert "how many keys you pressed" in html
    assert "whether text was pasted" in html


@pytest.mark.django_db
def test_a_german_answer_writing_study_says_what_is_recorded_in_german(client):
    study = answering_study(m=1, language="de")
    client.get(entry(study))
    html = client.get(reverse("surveys:answering-consent", args=[study.slug])).content.decode()
    assert "wie viele Tasten Sie gedrückt haben" in html
    assert "nie automatisch" in html


def written(client, study, pid: str, post: dict, raw_signals: str | None = None) -> Answer:
    consented(client, study, pid=pid)
    data = post | ({"writing_signals": raw_signals} if raw_signals else {})
    assert client.post(page(study, 1), data).status_code == 302
    client.cookies.clear()
    return Answer.objects.filter(origin=Answer.Origin.RESPONDENT).latest("pk")


def copied_from_the_llm(study) -> dict:
    llm = Answer.objects.get(system__key="gpt", vignette__key="v1")
    post = {"action": llm.action, "additional_information": llm.additional_information}
    for number, feature in enumerate(llm.features.all(), start=1):
        post |= {
            f"feature_{number}": feature.feature,
            f"weight_{number}": feature.weight,
            f"reason_{number}": feature.reason,
        }
    return post


def pasted_everything(post: dict) -> str:
    texts = {name: value for name, value in post.items() if not name.startswith("weight_")}
    return signals({name: field(pastes=1, pasted_chars=len(text)) for name, text in texts.items()})


@pytest.mark.django_db
def test_the_side_by_side_page_shows_each_human_answers_rating_signals_and_closest_answers(client, admin_user):
    study = answering_study(vignettes=1, m=1)
    copy = written(
        client,
        study,
        "5f1e0c7a9b3d2e4f6a8b0c10",
        copied_from_the_llm(study),
        pasted_everything(copied_from_the_llm(study)),
    )
    typed = answer_post()
    keystrokes = {name: field(keys=len(text) + 3) for name, text in typed.items() if not name.startswith("weight_")}
    own = written(client, study, "5f1e0c7a9b3d2e4f6a8b0c11", typed, signals(keystrokes))
    client.force_login(admin_user)
    html = client.get(reverse("admin:surveys_study_answers", args=[study.pk])).content.decode()
    assert "Authenticity of answers written in the survey: 1 high · 0 mixed · 1 low · 0 unknown" in html
    assert "Authenticity: Low" in html
    assert f"near-duplicate of {Answer.objects.get(system__key='gpt')} (1.00)" in html
    assert copy.authenticity == "low"
    assert own.authenticity == "high"
    change = client.get(reverse("admin:surveys_study_change", args=[study.pk])).content.decode()
    assert "1 high · 0 mixed · 1 low · 0 unknown" in change


@pytest.mark.django_db
def test_the_authenticity_csv_gives_each_human_answers_rating_shares_and_closest_llm_answer(client, admin_user):
    study = answering_study(vignettes=1, m=1)
    post = copied_from_the_llm(study)
    copy = written(client, study, "5f1e0c7a9b3d2e4f6a8b0c10", post, pasted_everything(post))
    client.force_login(admin_user)
    response = client.get(reverse("analysis:export", args=[study.slug, "authenticity.csv"]))
    lines = b"".join(response.streaming_content).decode().splitlines()
    header, row = lines[0].split(","), lines[1].split(",")
    values = dict(zip(header, row, strict=True))
    assert values["answer_id"] == str(copy.pk)
    assert values["rating"] == "low"
    assert values["pasted_share"] == "1.0"
    assert values["closest_llm_answer"] == "gpt on v1 #1"
    assert values["llm_similarity"] == "1.0"


@pytest.mark.django_db
def test_the_study_file_carries_each_survey_answers_authenticity_and_refuses_malformed_signals(client):
    from surveys.services.study_files import StudyFileError, export_study, import_study

    study = answering_study(vignettes=1, m=1)
    post = copied_from_the_llm(study)
    written(client, study, "5f1e0c7a9b3d2e4f6a8b0c10", post, pasted_everything(post))
    exported = export_study(study)
    survey = [a for a in exported["answers"] if a["system"] == "lay"]
    assert survey[0]["authenticity"]["rating"] == "low"
    assert survey[0]["authenticity"]["signals"]["fields"]["action"]["pasted_chars"] == len(post["action"])
    assert all("authenticity" not in a for a in exported["answers"] if a["system"] == "gpt")

    copy = import_study(dict(exported, slug="copy"))
    assert export_study(copy)["answers"] == exported["answers"]
    survey[0]["authenticity"]["signals"]["page"]["hidden"] = -3
    with pytest.raises(StudyFileError) as caught:
        import_study(dict(exported, slug="copy2"))
    assert "answers[1].authenticity.signals" in " ".join(caught.value.errors)
