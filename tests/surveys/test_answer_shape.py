"""The answer's one shape: the schemas providers are sent, and one weight rule on every surface."""

import json

import jsonschema
import pytest

from llm_collect.parsing import ParseError, parse_answer
from llm_collect.providers import gemini_generate, openai_chat
from surveys.models import Answer
from surveys.services.answer_shape import FeatureIn, answer_json_schema, gemini_answer_schema
from surveys.services.shape_basics import ShapeError
from tests.surveys.test_admin import _answer_form
from tests.surveys.test_respondents import answer_post, answering_study, consented, page

# What the providers accept, written out by hand from their documentation: OpenAI Structured Outputs
# (strict: every object closes with additionalProperties false and requires all of its properties) and
# Gemini's responseSchema (an OpenAPI subset: upper-case types, no additionalProperties).
OPENAI_STRICT_SCHEMA = {
    "type": "object",
    "properties": {
        "features": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "feature": {"type": "string"},
                    "weight": {"type": "integer"},
                    "reason": {"type": "string"},
                },
                "required": ["feature", "weight", "reason"],
                "additionalProperties": False,
            },
        },
        "action": {"type": "string"},
        "additional_information": {"type": "string"},
    },
    "required": ["features", "action", "additional_information"],
    "additionalProperties": False,
}
GEMINI_RESPONSE_SCHEMA = {
    "type": "OBJECT",
    "properties": {
        "features": {
            "type": "ARRAY",
            "items": {
                "type": "OBJECT",
                "properties": {
                    "feature": {"type": "STRING"},
                    "weight": {"type": "INTEGER"},
                    "reason": {"type": "STRING"},
                },
                "required": ["feature", "weight", "reason"],
            },
        },
        "action": {"type": "STRING"},
        "additional_information": {"type": "STRING"},
    },
    "required": ["features", "action", "additional_information"],
}


def test_the_schema_sent_to_openai_is_the_strict_schema_structured_outputs_accepts():
    assert answer_json_schema() == OPENAI_STRICT_SCHEMA
    assert openai_chat.ANSWER_SCHEMA == OPENAI_STRICT_SCHEMA


def test_the_schema_sent_to_gemini_is_the_openapi_subset_it_accepts():
    assert gemini_answer_schema() == GEMINI_RESPONSE_SCHEMA
    assert gemini_generate.GEMINI_SCHEMA == GEMINI_RESPONSE_SCHEMA


def test_a_reply_written_to_the_schema_is_a_valid_answer_and_one_that_is_not_is_refused_by_both():
    reply = {
        "features": [
            {"feature": "honesty", "weight": 70, "reason": "trust"},
            {"feature": "harm", "weight": 30, "reason": ""},
        ],
        "action": "Tell the truth.",
        "additional_information": "",
    }
    jsonschema.validate(reply, answer_json_schema())
    assert [f.weight for f in parse_answer(json.dumps(reply)).features] == [70, 30]
    reply["features"][0]["note"] = "not asked for"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(reply, answer_json_schema())


def test_a_zero_weight_is_refused_by_the_services_and_in_llm_replies():
    with pytest.raises(ShapeError, match="0 is outside 1–100"):
        FeatureIn(feature="harm", weight=0)

    with pytest.raises(ParseError, match=r"features\[1\]\.weight: 0 is outside 1–100"):
        parse_answer(
            json.dumps({"features": [{"feature": "a", "weight": 100}, {"feature": "b", "weight": 0}], "action": "x"})
        )


@pytest.mark.django_db
def test_a_respondent_cannot_give_a_feature_a_weight_of_zero(client):
    study = answering_study(m=1)
    consented(client, study)
    response = client.post(page(study, 1), answer_post(weight_1="100", weight_2="0"))
    assert response.status_code == 400
    html = response.content.decode()
    assert "A weight is a whole number from 1 to 100." in html
    assert 'min="1"' in html  # the page's own check and the browser agree with the server
    assert not Answer.objects.filter(origin=Answer.Origin.RESPONDENT).exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("researcher")
def test_a_researcher_cannot_give_a_feature_a_weight_of_zero_in_the_admin(client, study):
    answer = Answer.objects.filter(vignette__study=study).first()
    url, data = _answer_form(client, answer)
    data.update({"features-0-weight": "100", "features-1-weight": "0", "_save": "Save"})
    response = client.post(url, data)
    assert response.status_code == 200
    assert "0 is outside 1–100: every feature named carries some weight." in response.content.decode()
    assert sorted(answer.features.values_list("weight", flat=True)) == [40, 60]
