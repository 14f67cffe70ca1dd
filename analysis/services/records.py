"""What a run stores of a fit: JSON-ready numbers (nan and infinities are None), stars and intervals."""

from __future__ import annotations

import math

import numpy as np

from .. import bradley_terry as bt
from ..results import INTERVAL_KINDS, EffectEstimate, Fit, Interval, ItemEstimate
from ..results.headline import MAX_SE, degenerate


def json_safe(value):
    """numpy scalars and arrays to Python, nan and infinities to None (PostgreSQL's JSON has no NaN)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return [json_safe(v) for v in value.tolist()]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


def stars(p: float | None) -> str:
    if p is None or p != p:
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def fit_of(result: bt.BTResult) -> Fit:
    """What a run stores of one fit: JSON-ready numbers (nan and infinities are None)."""
    numbers = (result.estimates, result.se, result.z, result.p, result.ci_low, result.ci_high)
    return Fit(
        reference=result.reference,
        n_comparisons=int(result.n_comparisons),
        log_likelihood=json_safe(result.log_likelihood),
        deviance=json_safe(result.deviance),
        null_deviance=json_safe(result.null_deviance),
        converged=bool(result.converged),
        iterations=int(result.iterations),
        items=[_item(result, k, numbers) for k in range(len(result.item_names))],
        order_effect=effect_of(result.order_effect),
        covariate_effects=(
            None if result.covariate_effects is None else [_estimate_of(e) for e in result.covariate_effects]
        ),
        problems=list(result.problems),
    )


def _item(result: bt.BTResult, k: int, numbers) -> ItemEstimate:
    name = result.item_names[k]
    *shown, reason = _worth_printing(
        [json_safe(float(values[k])) for values in numbers], reference=name == result.reference
    )
    wins, losses = round(float(result.wins[k])), round(float(result.losses[k]))
    return ItemEstimate(name, **_numbers(shown), wins=wins, losses=losses, not_estimable=reason)


def effect_of(effect: bt.Effect | None) -> EffectEstimate | None:
    return None if effect is None else _estimate_of(effect)


def _estimate_of(effect: bt.Effect) -> EffectEstimate:
    numbers = (effect.estimate, effect.se, effect.z, effect.p, effect.ci_low, effect.ci_high)
    *shown, reason = _worth_printing([json_safe(float(value)) for value in numbers])
    return EffectEstimate(effect.name, **_numbers(shown), not_estimable=reason)


def _numbers(shown: list) -> dict[str, float | None]:
    return dict(zip(("estimate", "se", "z", "p", "ci_low", "ci_high"), shown, strict=True))


def _worth_printing(numbers: list, *, reference: bool = False) -> list:
    """(estimate, se, z, p, ci_low, ci_high, not_estimable): all None with the reason when the SE is huge or zero.

    An infinite estimate (a system that never wins) stays None without a reason: the fit's problems say why."""
    estimate, se = numbers[0], numbers[1]
    reason = "" if estimate is None else degenerate(estimate, se, reference=reference)
    return [None] * 6 + [f"not estimable here: {reason}"] if reason else [*numbers, ""]


def interval_of(kind: str, result, *, details: dict) -> Interval:
    """What a run stores of one interval kind. Bounds that say nothing are None: an SE above MAX_SE (log-odds), or
    a zero-width interval away from 0 (a variance clipped to 0); the reference's [0, 0] stays."""
    described = INTERVAL_KINDS[kind]
    se, low, high = json_safe(result.se), json_safe(result.ci_low), json_safe(result.ci_high)
    empty = [
        s is not None and (s > MAX_SE or (s <= 1e-12 and not lo == hi == 0.0))
        for s, lo, hi in zip(se, low, high, strict=True)
    ]
    return Interval(
        label=described.label,
        answers=described.answers,
        level=float(result.level),
        ci_low=[None if e else v for e, v in zip(empty, low, strict=True)],
        ci_high=[None if e else v for e, v in zip(empty, high, strict=True)],
        se=[None if e else v for e, v in zip(empty, se, strict=True)],
        details=json_safe(details),
    )
