"""The fits reported beside the main one: the style-controlled fit and the other of plain and Firth."""

from __future__ import annotations

import numpy as np

from .. import bradley_terry as bt
from ..results import ALTERNATIVE_FITS, AlternativeFit
from .judged import Judged, fit_judged, guarded
from .records import fit_of


def reported_fit(judged: Judged, *, plain: bt.BTResult) -> tuple[bt.BTResult, dict[str, AlternativeFit], list[str]]:
    """The fit whose estimates are reported, the other of plain and Firth beside it, and what to say.

    The study's bias-reduced setting reports Firth's fit (finite where a system never wins) and keeps
    the maximum-likelihood fit beside it, so the dashboard can say which estimates the setting changed.
    """
    if not judged.parameters["bias_reduced"]:
        return plain, {"bias_reduced": _bias_reduced(judged)}, []
    firth = _firth(judged)
    if firth is None:
        problem = "The bias-reduced fit could not be computed: these are the maximum-likelihood estimates."
        return plain, {}, [problem]
    beside = AlternativeFit(label=ALTERNATIVE_FITS["maximum_likelihood"], fit=fit_of(plain))
    return firth, {"maximum_likelihood": beside}, []


def style_controlled(judged: Judged) -> AlternativeFit:
    """The fit with the answers' length difference as a covariate (Chatbot Arena's style control).

    When every judged pair had answers of equal length there is nothing to control for; when each
    system's answers are equally long on every vignette the covariate is confounded with the
    systems and the fit says it is not identifiable.
    """
    label = ALTERNATIVE_FITS["style_controlled"]
    if not np.any(judged.style):
        return AlternativeFit(label=label, fit=None, problems=["No length differences to control for."])
    if _collinear_with_systems(judged):
        reason = (
            "Not estimable here: the length differences are explained by which systems were compared (each system's "
            "answers differ in length only by system), so length and system cannot be told apart."
        )
        return AlternativeFit(label=label, fit=None, problems=[reason])
    covariates = (judged.style / judged.parameters["style_per_words"])[:, None]
    return AlternativeFit(
        label=label, fit=fit_of(fit_judged(judged, first=judged.first_in_estimates(), covariates=covariates))
    )


def _collinear_with_systems(judged: Judged) -> bool:
    """Whether the length difference is (numerically) a combination of the system indicators: then the
    style-controlled fit has no information to separate them and its SEs are artefacts."""
    design = np.zeros((len(judged.winners), judged.n_items))
    rows = np.arange(len(judged.winners))
    design[rows, judged.winners] += 1.0
    design[rows, judged.losers] -= 1.0
    style = np.asarray(judged.style, float)
    fitted, *_ = np.linalg.lstsq(design, style, rcond=None)
    residual = style - design @ fitted
    return bool(np.linalg.norm(residual) <= 1e-8 * max(float(np.linalg.norm(style)), 1.0))


def _bias_reduced(judged: Judged) -> AlternativeFit:
    """Firth's bias-reduced fit (BTm(..., br = TRUE)): finite for a system that never wins."""
    label = ALTERNATIVE_FITS["bias_reduced"]
    result = _firth(judged)
    if result is None:
        return AlternativeFit(label=label, fit=None, problems=["The bias-reduced fit could not be computed."])
    return AlternativeFit(label=label, fit=fit_of(result))


def _firth(judged: Judged) -> bt.BTResult | None:
    return guarded(
        bt.fit,
        judged.winners,
        judged.losers,
        judged.n_items,
        reference=judged.reference,
        first=judged.first_in_estimates(),
        item_names=judged.names,
        bias_reduced=True,
    )
