"""One question's fits and diagnostics, JSON-ready; the maths is in analysis.bradley_terry."""

from __future__ import annotations

import math
import statistics
import warnings

import numpy as np

from .. import bradley_terry as bt
from .reading import QuestionData

DEFAULT_PARAMETERS = {
    "order_effect": False,  # the method's estimates are plain BT; the order effect is reported beside them
    "bootstrap": 1000,
    "seed": 20240601,
    "split_halves": 100,
    "style_per_words": 100,  # the style covariate: word-count difference (winner - loser) per 100 words
}


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
    if p is None or not p == p:
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def fit_question(data: QuestionData, *, systems: list[dict], reference: int, parameters: dict) -> dict:
    """Every estimate and diagnostic of one question, JSON-ready."""
    names = [s["key"] for s in systems]
    n_items = len(names)
    winners, losers, first, clusters, vignettes, style = data.arrays()
    out: dict = {"question": data.key, "text": data.text, "n_judgments": int(len(winners))}
    if len(winners) == 0:
        out |= {"fit": None, "problems": ["No valid judgments on this question yet."]}
        return out
    rng = np.random.default_rng(parameters["seed"])
    use_first = first if parameters["order_effect"] else None
    main = bt.fit(winners, losers, n_items, reference=reference, first=use_first, item_names=names)
    out["fit"] = main.as_dict()
    out["problems"] = list(main.problems)
    out["n_participants"] = int(len(np.unique(clusters)))
    out["holm_p"] = bt.holm(main.p)
    out["stars"] = [stars(p) for p in main.p]
    out["bootstrap"] = _bootstrap(winners, losers, n_items, reference, clusters, use_first, rng, parameters)
    ordered = bt.fit(winners, losers, n_items, reference=reference, first=first, item_names=names)
    out["order_effect"] = ordered.order_effect.as_dict() if ordered.order_effect else None
    out["style_controlled"] = _style_controlled(
        winners, losers, n_items, reference, use_first, style, names, parameters
    )
    out["first_position_rate"] = bt.first_position_rate(first, winners)
    out["separation_reliability"] = _guarded(bt.separation_reliability, main) if main.converged else None
    out["split_half_reliability"] = _split_half(winners, losers, clusters, n_items, reference, rng, parameters)
    out["by_vignette"] = _by_vignette(winners, losers, vignettes, n_items, reference, names)
    return json_safe(out)


def _style_controlled(winners, losers, n_items, reference, first, style, names, parameters) -> dict:
    """The fit with the answers' length difference as a covariate (Chatbot Arena's style control).

    When every judged pair had answers of equal length there is nothing to control for; when each
    system's answers are equally long on every vignette the covariate is confounded with the
    systems and the fit says it is not identifiable.
    """
    if not np.any(style):
        return {"items": None, "covariate_effects": None, "problems": ["No length differences to control for."]}
    styled = bt.fit(
        winners,
        losers,
        n_items,
        reference=reference,
        first=first,
        covariates=(style / parameters["style_per_words"])[:, None],
        item_names=names,
    )
    return styled.as_dict()


def _guarded(function, *args, **kwargs):
    """A diagnostic that cannot be computed on this data is None, never a failed run."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return function(*args, **kwargs)
    except (ValueError, ZeroDivisionError, IndexError, np.linalg.LinAlgError, FloatingPointError):
        return None


def _bootstrap(winners, losers, n_items, reference, clusters, first, rng, parameters) -> dict | None:
    if parameters["bootstrap"] < 1 or len(np.unique(clusters)) < 2:
        return None
    result = _guarded(
        bt.bootstrap,
        winners,
        losers,
        n_items,
        reference=reference,
        clusters=clusters,
        rng=rng,
        first=first,
        n_boot=parameters["bootstrap"],
    )
    if result is None:
        return None
    return {
        "n_boot": parameters["bootstrap"],
        "n_failed": result.n_failed,
        "level": result.level,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "se": result.se,
    }


def _split_half(winners, losers, clusters, n_items, reference, rng, parameters) -> float | None:
    if len(np.unique(clusters)) < 4 or parameters["split_halves"] < 1:
        return None
    return _guarded(
        bt.split_half_reliability,
        winners,
        losers,
        clusters,
        n_items,
        reference,
        rng,
        n_splits=parameters["split_halves"],
    )


def _by_vignette(winners, losers, vignettes, n_items, reference, names) -> list[dict]:
    """Per vignette: estimates, SEs, wins and losses, and what broke the fit there."""
    breakdown = []
    for vignette in np.unique(vignettes):
        rows = vignettes == vignette
        result = bt.fit(winners[rows], losers[rows], n_items, reference=reference, item_names=names)
        breakdown.append(
            {
                "vignette_id": int(vignette),
                "n_judgments": int(rows.sum()),
                "estimates": result.estimates,
                "se": result.se,
                "wins": result.wins,
                "losses": result.losses,
                "problems": list(result.problems),
            }
        )
    return breakdown


def halo_correlations(results: dict) -> dict:
    """Pearson correlation of the system estimates between every two questions (finite systems only)."""
    keys = [key for key, result in results.items() if result.get("fit")]
    matrix = []
    for first in keys:
        row = []
        for second in keys:
            x = np.array([i["estimate"] for i in results[first]["fit"]["items"]], dtype=float)
            y = np.array([i["estimate"] for i in results[second]["fit"]["items"]], dtype=float)
            both = np.isfinite(x) & np.isfinite(y)
            enough = both.sum() >= 3 and np.std(x[both]) > 0 and np.std(y[both]) > 0
            row.append(float(np.corrcoef(x[both], y[both])[0, 1]) if enough else None)
        matrix.append(row)
    off_diagonal = [v for i, row in enumerate(matrix) for j, v in enumerate(row) if i < j and v is not None]
    return {
        "questions": keys,
        "matrix": matrix,
        "mean_off_diagonal": statistics.fmean(off_diagonal) if off_diagonal else None,
    }
