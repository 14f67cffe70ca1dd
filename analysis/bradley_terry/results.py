"""What a fit returns: Effect, BTResult, BootstrapResult, and the Wald test helpers."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special, stats

Z95 = stats.norm.ppf(0.975)


@dataclass(frozen=True)
class Effect:
    """One extra coefficient (order effect or a covariate) with its Wald test."""

    name: str
    estimate: float
    se: float
    z: float
    p: float
    ci_low: float
    ci_high: float

    def as_dict(self) -> dict:
        numbers = ("estimate", "se", "z", "p", "ci_low", "ci_high")
        return {"name": self.name} | {key: _json_number(getattr(self, key)) for key in numbers}


@dataclass
class BTResult:
    """A fitted Bradley-Terry model; per-item arrays follow `item_names`."""

    item_names: list[str]
    reference: str
    estimates: np.ndarray
    se: np.ndarray
    z: np.ndarray
    p: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    wins: np.ndarray
    losses: np.ndarray
    n_comparisons: int
    log_likelihood: float
    deviance: float
    null_deviance: float
    converged: bool
    iterations: int
    order_effect: Effect | None = None
    covariate_effects: list[Effect] | None = None
    problems: list[str] = field(default_factory=list)
    # Covariance of (abilities..., order effect, covariates); the reference row is zero.
    covariance: np.ndarray | None = None
    bias_reduced: bool = False  # Firth's estimates (BTm(..., br = TRUE)) rather than maximum likelihood
    # Bias-reduced fits only: differences within components not linked with the reference.
    unlinked: list[Effect] = field(default_factory=list)

    def coefficients(self) -> np.ndarray:
        """(abilities..., order effect, covariates), in the order of `covariance`."""
        effects = list(self.covariate_effects or [])
        fitted_extras = len(self.covariance) - len(self.item_names) if self.covariance is not None else None
        if self.order_effect is not None and (fitted_extras is None or fitted_extras > len(effects)):
            effects.insert(0, self.order_effect)  # else an order effect that could not be fitted
        return np.array([*self.estimates, *(effect.estimate for effect in effects)], dtype=float)

    def contrast(self, weights: np.ndarray) -> tuple[float, float]:
        """Estimate and SE of sum(w * lambda), using the full covariance."""
        assert self.covariance is not None  # every fit sets it
        w = np.zeros(len(self.covariance))
        w[: len(weights)] = weights
        return float(w @ np.nan_to_num(self.estimates)), float(np.sqrt(w @ self.covariance @ w))

    def difference(self, first: int, second: int) -> Effect:
        """Wald test of lambda_first - lambda_second."""
        weights = np.zeros(len(self.item_names))
        weights[first], weights[second] = 1.0, -1.0
        estimate, se = self.contrast(weights)
        if not (np.isfinite(self.estimates[first]) and np.isfinite(self.estimates[second])):
            estimate, se = math.nan, math.nan
        name = f"{self.item_names[first]} - {self.item_names[second]}"
        return _wald(name, estimate, se)

    def as_dict(self) -> dict:
        """JSON-safe summary: nan and infinities become None."""
        return {
            "reference": self.reference,
            "n_comparisons": int(self.n_comparisons),
            "log_likelihood": _json_number(self.log_likelihood),
            "deviance": _json_number(self.deviance),
            "null_deviance": _json_number(self.null_deviance),
            "converged": bool(self.converged),
            "iterations": int(self.iterations),
            "items": [self._item_dict(k) for k in range(len(self.item_names))],
            "order_effect": self.order_effect.as_dict() if self.order_effect else None,
            "covariate_effects": (
                None if self.covariate_effects is None else [effect.as_dict() for effect in self.covariate_effects]
            ),
            "problems": list(self.problems),
        }

    def _item_dict(self, k: int) -> dict:
        numbers = {"estimate": self.estimates, "se": self.se, "z": self.z, "p": self.p}
        numbers |= {"ci_low": self.ci_low, "ci_high": self.ci_high}
        return (
            {"item": self.item_names[k]}
            | {key: _json_number(values[k]) for key, values in numbers.items()}
            | {
                "wins": round(float(self.wins[k])),
                "losses": round(float(self.losses[k])),
            }
        )


@dataclass(frozen=True)
class BootstrapResult:
    """Percentile intervals from a participant-clustered bootstrap."""

    ci_low: np.ndarray
    ci_high: np.ndarray
    se: np.ndarray
    estimates: np.ndarray  # (n_boot, n_items); rows of failed refits are nan
    n_failed: int
    level: float


def _json_number(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _wald(name: str, estimate: float, se: float) -> Effect:
    z, p, low, high = wald_arrays(np.array([estimate]), np.array([se]))
    return Effect(name, float(estimate), float(se), float(z[0]), float(p[0]), float(low[0]), float(high[0]))


def wald_arrays(estimates: np.ndarray, se: np.ndarray):
    """Wald z, two-sided p and 95% interval; z and p are nan where se is 0 (the reference)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(se > 0, estimates / se, np.nan)
    p = 2 * special.ndtr(-np.abs(z))
    return z, p, estimates - Z95 * se, estimates + Z95 * se
