"""A fit of any comparison file with cluster-robust se, p and intervals: `manage.py fit_bt --cluster`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .. import bradley_terry as bt
from ..bradley_terry.labels import count_distinct
from ..comparison_files import Comparisons
from ..results.headline import MIN_VIGNETTES, degenerate


@dataclass(frozen=True)
class Clustered:
    """The fit with its se, z, p and interval replaced by the cluster-robust ones (t with `df`)."""

    fit: bt.BTResult
    interval: str  # e.g. "cluster-robust (judge × vignette)"
    df: int | None
    clusters: dict[str, int]

    def as_dict(self) -> dict:
        return self.fit.as_dict()


def clustered(
    result: bt.BTResult, data: Comparisons, columns: tuple[str, ...], *, first: np.ndarray | None
) -> Clustered | None:
    """`result` (the maximum-likelihood fit of `data`) with the sandwich over `columns` (one or two), as
    `vcovCL(fit, cluster = ~ a + b)`; None without columns. Huge or zero SEs are not estimable (nan)."""
    if not columns:
        return None
    robust = bt.cluster_robust(
        data.winners,
        data.losers,
        len(data.item_names),
        reference=data.item_names.index(result.reference),
        judges=data.clusters[columns[0]],
        vignettes=data.clusters[columns[1]] if len(columns) > 1 else None,
        counts=data.counts,
        first=first,
        item_names=data.item_names,
        fitted=result,
    )
    numbers = {key: np.array(getattr(robust, key), float) for key in ("se", "z", "p", "ci_low", "ci_high")}
    problems = list(result.problems)
    for k, name in enumerate(data.item_names):
        reason = degenerate(_number(robust.estimates[k]), _number(robust.se[k]), reference=name == result.reference)
        if reason and np.isfinite(robust.estimates[k]):
            for values in numbers.values():
                values[k] = np.nan
            problems.append(f"{name}: not estimable here: {reason}.")
    counts = {column: count_distinct(data.clusters[column]) for column in columns}
    if len(columns) > 1 and min(counts.values()) < MIN_VIGNETTES:
        problems.append(
            f"Only {min(counts.values())} clusters in the smaller dimension: the two-way interval under-covers below "
            f"{MIN_VIGNETTES} (docs/statistics.md)."
        )
    fit = dataclasses.replace(
        result, estimates=robust.estimates, order_effect=robust.order_effect or result.order_effect, problems=problems,
        se=numbers["se"], z=numbers["z"], p=numbers["p"], ci_low=numbers["ci_low"], ci_high=numbers["ci_high"],
    )  # fmt: skip
    return Clustered(fit=fit, interval=f"cluster-robust ({' × '.join(columns)})", df=robust.df, clusters=counts)


def _number(value) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None
