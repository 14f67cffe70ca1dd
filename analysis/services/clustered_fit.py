"""A fit of any comparison file with cluster-robust se, p and intervals: `manage.py fit_bt --cluster`.

With two columns (judge, then vignette) the numbers are the dashboard's headline test (CR2 over the second
column with the first's design effect, Satterthwaite df per item) and follow its rule: with fewer than 3
vignettes or one judge there is no test (p and z empty, `why_not` says why) and the interval is the
judge-robust one, narrower. With one column: that column's sandwich, t with its clusters − 1 df."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .. import bradley_terry as bt
from ..bradley_terry.headline_test import INTERVAL_NAME
from ..bradley_terry.labels import count_distinct
from ..comparison_files import Comparisons
from ..results.headline import degenerate


@dataclass(frozen=True)
class Clustered:
    """The fit with its se, z, p and interval replaced by the cluster-robust ones (t with `df`)."""

    fit: bt.BTResult
    interval: str  # e.g. "CR2 over vignette × judge design effect, Satterthwaite df"
    df: float | None  # one df for every item; None when it varies by item (`item_df`)
    clusters: dict[str, int]
    item_df: list[float | None] = dataclasses.field(default_factory=list)  # per item (None: the reference, none)
    tested: bool = True
    why_not: str = ""

    def as_dict(self) -> dict:
        return self.fit.as_dict()

    def df_in_words(self) -> str:
        values = sorted(v for v in self.item_df if v is not None) or ([self.df] if self.df is not None else [])
        if not values:
            return "no t reference"
        if f"{values[0]:.3g}" == f"{values[-1]:.3g}":
            return f"t with {values[0]:.3g} df"
        return f"t with {values[0]:.3g}–{values[-1]:.3g} df (Satterthwaite, per item)"


def clustered(
    result: bt.BTResult, data: Comparisons, columns: tuple[str, ...], *, first: np.ndarray | None
) -> Clustered | None:
    """`result` (the maximum-likelihood fit of `data`) with the sandwich over `columns` (one or two), as
    `vcovCL(fit, cluster = ~ a + b)`; None without columns. Huge or zero SEs are not estimable (nan)."""
    if not columns:
        return None
    if len(columns) == 2:
        return _headline(result, data, columns, first=first)
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
    fit = dataclasses.replace(
        result, estimates=robust.estimates, order_effect=robust.order_effect or result.order_effect, problems=problems,
        se=numbers["se"], z=numbers["z"], p=numbers["p"], ci_low=numbers["ci_low"], ci_high=numbers["ci_high"],
    )  # fmt: skip
    df = None if robust.df is None else float(robust.df)
    return Clustered(
        fit=fit, interval=f"cluster-robust ({columns[0]})", df=df, clusters=counts,
        item_df=[None if name == result.reference else df for name in data.item_names],
    )  # fmt: skip


def _headline(
    result: bt.BTResult, data: Comparisons, columns: tuple[str, ...], *, first: np.ndarray | None
) -> Clustered:
    """The headline test over judges (columns[0]) and vignettes (columns[1]), or the narrower judge-robust
    interval without p where the test cannot generalise."""
    judges, vignettes = data.clusters[columns[0]], data.clusters[columns[1]]
    reference = data.item_names.index(result.reference)
    test = bt.headline_test(
        data.winners, data.losers, len(data.item_names), reference=reference, judges=judges, vignettes=vignettes,
        first=first, counts=data.counts, item_names=data.item_names, fitted=result,
    )  # fmt: skip
    counts = {columns[0]: test.n_judges, columns[1]: test.n_vignettes}
    problems = list(result.problems)
    if test.why_not:
        narrower = clustered(result, data, columns[:1], first=first) if test.n_judges >= 2 else None
        base = narrower.fit if narrower else result
        nothing = np.full(len(data.item_names), np.nan)
        fit = dataclasses.replace(base, z=nothing, p=nothing.copy(), problems=[*base.problems, test.why_not])
        label = f"cluster-robust ({columns[0]}), narrower: no test" if narrower else "Wald, narrower: no test"
        return Clustered(
            fit=fit, interval=label, df=narrower.df if narrower else None, clusters=counts,
            item_df=narrower.item_df if narrower else [None] * len(data.item_names), tested=False,
            why_not=f"{test.why_not} The interval is narrower: it does not generalise to other {columns[1]}s.",
        )  # fmt: skip
    numbers = {key: np.array(getattr(test, key), float) for key in ("se", "t", "p", "ci_low", "ci_high", "df")}
    for k, name in enumerate(data.item_names):
        if k == reference or not np.isfinite(test.estimates[k]):
            continue
        reason = test.not_estimable[k] or degenerate(_number(test.estimates[k]), _number(test.se[k]))
        if reason:
            for values in numbers.values():
                values[k] = np.nan
            problems.append(f"{name}: not estimable here: {reason}.")
    fit = dataclasses.replace(
        result, problems=problems, se=numbers["se"], z=numbers["t"], p=numbers["p"],
        ci_low=numbers["ci_low"], ci_high=numbers["ci_high"],
    )  # fmt: skip
    item_df = [None if k == reference else _number(v) for k, v in enumerate(numbers["df"])]
    finite = sorted(v for v in item_df if v is not None)
    same = bool(finite) and finite[-1] - finite[0] < 1e-9
    return Clustered(
        fit=fit, interval=INTERVAL_NAME,
        df=finite[0] if same else None, clusters=counts, item_df=item_df,
    )  # fmt: skip


def _number(value) -> float | None:
    value = float(value)
    return value if np.isfinite(value) else None
