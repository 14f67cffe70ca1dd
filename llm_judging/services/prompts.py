"""What a judge model is asked, in what shape it must answer, and how its reply is read.

The user prompt is rendered from templates/llm_judging/judge_prompt.txt: the vignette, then Answer A and
Answer B as the judging page shows them (features with weight and reason, the conclusion, further
information), then the study's questions. The reply shape is a JSON Schema built from the question keys:
``{"<key>": {"choice": "A" | "B", "reason": "..."}}`` with every key required, sent as the provider's
strict structured-output setting where it has one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from django.template.loader import render_to_string

from llm_collect.providers import OutputSchema
from surveys.models import Answer, Feature, Question, Vignette

SCHEMA_NAME = "judgment"
SYSTEM_PROMPT = (
    "You are a careful judge in a study of moral reasoning. You compare two written answers to the same "
    "scenario and say, for each question, which answer is better. Judge the content, not the order in which "
    "the answers are shown or their length. Reply with a JSON object only."
)


class ParseError(ValueError):
    """A reply that does not give one pick, A or B, for every question."""


@dataclass(frozen=True)
class Picks:
    picks: dict[str, str]  # question key -> "A" or "B"
    reasons: dict[str, str]


def judgment_schema(question_keys: list[str]) -> OutputSchema:
    pick = {
        "type": "object",
        "properties": {
            "choice": {"type": "string", "enum": ["A", "B"]},
            "reason": {"type": "string", "description": "One short sentence; may be empty."},
        },
        "required": ["choice", "reason"],
        "additionalProperties": False,
    }
    schema = {
        "type": "object",
        "properties": {key: pick for key in question_keys},
        "required": list(question_keys),
        "additionalProperties": False,
    }
    return OutputSchema(name=SCHEMA_NAME, schema=schema)


def shown_answer(answer: Answer) -> dict:
    features = Feature.objects.filter(answer_id=answer.pk).order_by("position")
    return {"features": list(features), "action": answer.action, "further": answer.additional_information}


def render_judging_prompt(*, vignette: Vignette, first: Answer, second: Answer, questions: list[Question]) -> str:
    context = {
        "vignette": vignette,
        "answers": [("A", shown_answer(first)), ("B", shown_answer(second))],
        "questions": questions,
        "example": json.dumps({q.key: {"choice": "A", "reason": "…"} for q in questions[:1]}),
    }
    return render_to_string("llm_judging/judge_prompt.txt", context).strip() + "\n"


def parse_picks(text: str, question_keys: list[str]) -> Picks:
    """Read a reply; ParseError unless every question has a pick "A" or "B" (a bare "A" is accepted too)."""
    text = text.strip()
    if text.startswith("```"):  # a fenced block from a model without JSON mode
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ParseError(f"not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ParseError("not a JSON object")
    picks, reasons, problems = {}, {}, []
    for key in question_keys:
        value = data.get(key)
        reason = ""
        if isinstance(value, dict):
            reason = value.get("reason") or ""
            value = value.get("choice")
        if isinstance(value, str) and value.strip().upper() in ("A", "B"):
            picks[key] = value.strip().upper()
            reasons[key] = str(reason)[:1000]
        else:
            problems.append(key if value is None else f"{key}={value!r}")
    if problems:
        raise ParseError("no pick A or B for: " + ", ".join(problems))
    return Picks(picks=picks, reasons=reasons)
