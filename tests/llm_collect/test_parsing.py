"""Parsing model replies into the parts of an Answer."""

import json

import pytest

from llm_collect.parsing import ParseError, largest_remainder, parse_answer


def reply(weights, **extra):
    data = {
        "features": [{"feature": f"f{i}", "weight": w, "reason": f"r{i}"} for i, w in enumerate(weights)],
        "action": "Do the right thing.",
        "additional_information": "Ask around.",
        **extra,
    }
    return json.dumps(data)


def test_a_clean_reply_parses_without_normalising():
    parsed = parse_answer(reply([60, 40]))
    assert [f.weight for f in parsed.features] == [60, 40]
    assert parsed.normalised is False
    assert parsed.original_weights is None
    assert parsed.action == "Do the right thing."


def test_code_fences_and_prose_around_the_json_are_tolerated():
    text = "Sure! Here is my answer:\n```json\n" + reply([100]) + "\n```\nHope this helps."
    assert parse_answer(text).features[0].weight == 100
    assert parse_answer("Answer: " + reply([70, 30]) + " -- end").features[1].weight == 30


def test_weights_that_do_not_add_up_are_rescaled_by_largest_remainder_and_recorded():
    parsed = parse_answer(reply([5, 3, 2, 1]))
    assert [f.weight for f in parsed.features] == [46, 27, 18, 9]
    assert sum(f.weight for f in parsed.features) == 100
    assert parsed.normalised is True
    assert parsed.original_weights == [5, 3, 2, 1]


def test_fractional_weights_summing_to_100_become_whole_numbers():
    parsed = parse_answer(reply([33.3, 33.3, 33.4]))
    assert [f.weight for f in parsed.features] == [33, 33, 34]
    assert parsed.normalised is True


def test_percent_strings_are_numbers():
    assert [f.weight for f in parse_answer(reply(["60%", "40"])).features] == [60, 40]


def test_largest_remainder_gives_ties_to_the_earlier_feature():
    assert largest_remainder([1, 1, 1]) == [34, 33, 33]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("I think she should tell the truth.", "no JSON object"),
        ('{"features": [{"feature": "a", "weight": 50, "reason": "x"}', "no JSON object"),
        (reply([0, 100]), r"features\[0\]\.weight: 0 is outside 1–100"),
        (reply([0, 50]), r"features\[0\]\.weight: 0 is outside 1–100"),  # a zero is not rescaled away
        (reply([-10, 110]), r"features\[0\]\.weight: -10 is outside 1–100"),
        (reply([50, None]), "missing"),
        (reply([20] * 6), "at most 5 features, not 6"),
        (reply([]), "an answer needs at least one feature"),
        (reply([100], features=[{"feature": " ", "weight": 100}]), r"features\[0\]\.feature: must not be empty"),
        (reply([100], action=""), "action is empty"),
        (json.dumps({"answer": "yes"}), 'no JSON object with "features"'),
    ],
)
def test_replies_that_break_the_rules_are_invalid(text, message):
    with pytest.raises(ParseError, match=message):
        parse_answer(text)
