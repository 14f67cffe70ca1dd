"""Turning a model's reply into the parts of an Answer.

What is tolerated: the JSON object wrapped in a code fence or with prose before or after it; weights given as
numbers, numeric strings or percentages ("30%"); additional_information given as a list of strings.

What happens to weights that do not sum to 100 (the decision, also shown in the admin): when every weight is a
positive number, the weights are rescaled proportionally to whole numbers summing to exactly 100 by the
largest-remainder method (ties go to the earlier feature), the Generation is marked ``normalised`` and keeps
the original weights. This keeps the model's stated proportions, which is what the question asks for ("by
proportion"). A missing action, or a weight that is missing or not a number, make the reply invalid here;
everything else (zero or negative weights, no features or more than five, an empty feature name) is the
answer's shape (surveys.services.answer_shape), the same rule as for study files, the admin and respondents.
An invalid reply is stored with the error and asked again a bounded number of times, then flagged for the
researcher.
"""

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from surveys.models import WEIGHT_TOTAL
from surveys.services.answer_shape import AnswerShape, FeatureIn, shape_errors
from surveys.services.shape_basics import ShapeError


class ParseError(ValueError):
    """The reply cannot become an Answer; the message says why."""


@dataclass(frozen=True)
class ParsedAnswer:
    features: list[FeatureIn]
    action: str
    additional_information: str
    normalised: bool = False
    original_weights: list[float] | None = None


FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def extract_object(text: str) -> dict:
    """The first JSON object in the text that has a "features" key (or the only object)."""
    if not text or not text.strip():
        raise ParseError("the reply is empty")
    candidates = [m.group(1) for m in FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    found: list[dict] = []
    for candidate in candidates:
        candidate = candidate.strip()
        try:
            value = json.loads(candidate)
        except ValueError:
            value = None
        if isinstance(value, dict):
            found.append(value)
            continue
        for match in re.finditer(r"\{", candidate):
            try:
                value, _ = decoder.raw_decode(candidate, match.start())
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
                if "features" in value:
                    break
    for value in found:
        if "features" in value:
            return value
    if found:
        raise ParseError('no JSON object with "features" in the reply (cut short, or another shape?)')
    raise ParseError("no JSON object found in the reply")


def as_weight(value, index: int) -> float:
    if isinstance(value, bool) or value is None:
        raise ParseError(f"features[{index}].weight is missing or not a number")
    if isinstance(value, str):
        cleaned = value.strip().rstrip("%").strip()
        try:
            value = float(cleaned)
        except ValueError:
            raise ParseError(f"features[{index}].weight {value!r} is not a number") from None
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise ParseError(f"features[{index}].weight is not a number")
    return float(value)


def as_text(value, name: str, *, required: bool) -> str:
    if value is None:
        value = ""
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        value = "\n".join(item.strip() for item in value)
    if not isinstance(value, str):
        raise ParseError(f"{name} must be text")
    value = value.strip()
    if required and not value:
        raise ParseError(f"{name} is empty")
    return value


def largest_remainder(weights: list[float], total: int = WEIGHT_TOTAL) -> list[int]:
    """Whole numbers proportional to `weights` that sum to exactly `total` (ties: the earlier one)."""
    whole = sum(weights)
    quotas = [w * total / whole for w in weights]
    floors = [math.floor(q) for q in quotas]
    short = total - sum(floors)
    order = sorted(range(len(weights)), key=lambda i: (-(quotas[i] - floors[i]), i))
    for i in order[:short]:
        floors[i] += 1
    return floors


def parse_answer(text: str) -> ParsedAnswer:
    data = extract_object(text)
    items = data.get("features")
    if not isinstance(items, list):
        raise ParseError('"features" must be a list')
    names, reasons, weights = [], [], []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ParseError(f"features[{index}] is not an object")
        names.append(as_text(item.get("feature"), f"features[{index}].feature", required=False))
        reasons.append(as_text(item.get("reason"), f"features[{index}].reason", required=False))
        weights.append(as_weight(item.get("weight"), index))
    action = as_text(data.get("action"), "action", required=True)
    additional = as_text(data.get("additional_information"), "additional_information", required=False)
    exact = all(w.is_integer() for w in weights) and sum(weights) == WEIGHT_TOTAL
    rescale = not exact and weights and all(w > 0 for w in weights) and math.isfinite(sum(weights))
    # As given first: mypy then types the list from the annotation, not from largest_remainder's list[int].
    final: Sequence[float] = (
        [int(w) if w.is_integer() else w for w in weights] if not rescale else largest_remainder(weights)
    )
    try:
        shape = AnswerShape.model_validate(
            {
                "features": [
                    {"feature": n, "weight": w, "reason": r} for n, w, r in zip(names, final, reasons, strict=True)
                ],
                "action": action,
                "additional_information": additional,
            }
        )
    except ShapeError as error:
        raise ParseError("; ".join(shape_errors(error))) from None
    return ParsedAnswer(
        features=shape.features,
        action=shape.action,
        additional_information=shape.additional_information,
        normalised=not exact,
        original_weights=None if exact else weights,
    )
