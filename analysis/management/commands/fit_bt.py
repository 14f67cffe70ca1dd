"""`manage.py fit_bt FILE.csv --reference ITEM [--order-effect] [--order-column NAME] [--bias-reduced]
[--cluster COLUMN ...] [--by set] [--fragility] [--json]`.

With `--cluster judge --cluster vignette` each item's se, p and interval are the dashboard's headline test
(CR2 over vignettes with the judge design effect, Satterthwaite df per item: R's clubSandwich `vcovCR` and
`coef_test`, docs/statistics.md); `interval` names it, each item's `df` is its t reference (top-level `df` too
when every item has the same). With fewer than 3 vignettes or one judge there is no test: `tested` is false,
p and z are null, `why_not` says why, and the interval is the judge-robust one, narrower. With one `--cluster`
column: that column's sandwich (`vcovCL`), t with its clusters - 1 df.

With a `set` column (each row's vignette set), `--by set` adds each set's estimates and a top-level
`differences` list: each system's ability in every later set minus the first set the file names, with the headline
test over the two `--cluster` columns, judge then vignette (docs/statistics.md, "Vignette sets"). `--fragility` adds, per system, `fragility`: the fewest
rows (`judgments`, their count, and `rows`, 0-based data-row indices) whose removal, confirmed by refitting,
makes that system not significant or flips its sign; null where it is not significant.
"""

import json
import math

from django.core.management.base import BaseCommand, CommandError

from analysis import bradley_terry
from analysis.comparison_files import ComparisonFileError, read_comparisons
from analysis.services.clustered_fit import Clustered, clustered
from analysis.services.file_claims import differences_by_set, fragility_of_items


class Command(BaseCommand):
    help = "Fit a Bradley-Terry model to a CSV of comparisons (winner,loser[,n][,first])."

    def add_arguments(self, parser):
        parser.add_argument("file", help="CSV with columns winner,loser and optionally n and first")
        parser.add_argument("--reference", required=True, help="item whose ability is fixed at 0")
        parser.add_argument(
            "--order-effect",
            action="store_true",
            help="estimate an effect of being shown first (needs the order column)",
        )
        parser.add_argument(
            "--order-column",
            default="first",
            metavar="NAME",
            help="column naming the item shown first, or the home team (default: first; BradleyTerry2's "
            "baseball file: home)",
        )
        parser.add_argument(
            "--bias-reduced",
            action="store_true",
            help="Firth's bias-reduced estimates, as BTm(..., br = TRUE): finite even for an item that never wins",
        )
        parser.add_argument(
            "--cluster",
            action="append",
            default=[],
            metavar="COLUMN",
            help="cluster-robust se, p and interval over this column (t with clusters - 1 df); twice, judge then "
            "vignette (--cluster judge --cluster vignette): the dashboard's headline test (CR2 over vignettes, judge "
            "design effect, Satterthwaite df per item; no test below 3 vignettes or with one judge)",
        )
        parser.add_argument(
            "--by",
            choices=["set"],
            help="set: each vignette set's estimates and each system's difference between sets (needs a `set` column)",
        )
        parser.add_argument(
            "--fragility",
            action="store_true",
            help="per significant system, the fewest rows whose removal (confirmed by refit) undoes it",
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args, **options):
        column = options["order_column"]
        clusters = tuple(options["cluster"])
        if len(clusters) > 2 or len(set(clusters)) != len(clusters):
            raise CommandError(
                "--cluster takes one or two different columns (e.g. --cluster judge --cluster vignette)."
            )
        if (clusters or options["by"] or options["fragility"]) and options["bias_reduced"]:
            raise CommandError(
                "--cluster, --by and --fragility are computed around the maximum-likelihood fit: leave out "
                "--bias-reduced."
            )
        try:
            data = read_comparisons(options["file"], first_column=column, cluster_columns=clusters)
            reference = data.index_of(options["reference"])
        except ComparisonFileError as exc:
            raise CommandError(str(exc)) from exc
        if options["order_effect"] and data.first is None:
            raise CommandError(
                f"--order-effect needs a `{column}` column naming the item shown first "
                "(name another column with --order-column)."
            )
        result = bradley_terry.fit(
            data.winners,
            data.losers,
            len(data.item_names),
            reference=reference,
            counts=data.counts,
            first=data.first if options["order_effect"] else None,
            item_names=data.item_names,
            bias_reduced=options["bias_reduced"],
        )
        first = data.first if options["order_effect"] else None
        robust = clustered(result, data, clusters, first=first)
        if options["by"] and data.sets is None:
            raise CommandError("--by set needs a `set` column naming each row's vignette set.")
        if options["by"] and len(clusters) != 2:
            raise CommandError(
                "--by set tests with the headline test, over judges and vignettes: add --cluster JUDGE_COLUMN "
                "--cluster VIGNETTE_COLUMN."
            )
        sets = differences_by_set(data, clusters, reference=reference, first=first) if options["by"] else None
        fragile = fragility_of_items(result, data, clusters, first=first) if options["fragility"] else None
        if options["json"]:
            summary = _summary(result, robust)
            if sets is not None:
                by_set = sets.as_dict()
                summary |= {"sets": by_set["sets"], "differences": by_set["differences"]}
            if fragile is not None:
                for item in summary["items"]:
                    found = fragile[item["item"]]
                    item["fragility"] = found and {"judgments": found.judgments, "rows": found.removed}
            self.stdout.write(json.dumps(summary, allow_nan=False))
            return
        self.stdout.write(format_table(robust.fit if robust else result))
        if robust is not None and robust.tested:
            self.stdout.write(f"se, p and 95% CI: {robust.interval}, {robust.df_in_words()}")
        elif robust is not None:
            self.stdout.write(
                f"No p or stars. se and 95% CI: {robust.interval}, {robust.df_in_words()}. {robust.why_not}"
            )
        if sets is not None:
            self.stdout.write(format_sets(sets))
        if fragile is not None:
            self.stdout.write(format_fragility(fragile))


def _summary(result: bradley_terry.BTResult, robust: Clustered | None) -> dict:
    keys = ("reference", "n_comparisons", "log_likelihood", "converged", "items", "order_effect", "problems")
    full = (robust.fit if robust else result).as_dict()
    summary = {key: full[key] for key in keys}
    if robust is not None:
        summary |= {"interval": robust.interval, "df": robust.df, "clusters": robust.clusters}
        summary |= {"tested": robust.tested, "why_not": robust.why_not}
        for item, df in zip(summary["items"], robust.item_df, strict=True):
            item["df"] = df
    if result.bias_reduced:
        summary |= {"bias_reduced": True, "unlinked": [effect.as_dict() for effect in result.unlinked]}
    return summary


def format_sets(sets) -> str:
    """Each set's estimates, then each system's difference between sets."""
    lines = []
    for one in sets.sets:
        lines.append(f"Set '{one.name}': {one.n_comparisons} comparisons, {one.n_vignettes} vignettes {one.why_not}")
        lines.extend(
            f"  {name:<20} {_number(one.estimates[k])} {_number(one.se[k])} {_p(one.p[k])} "
            f"[{_number(one.ci_low[k])}, {_number(one.ci_high[k])}]"
            for k, name in enumerate(sets.item_names)
        )
    lines.append(f"Differences between sets ({sets.interval}; Holm across systems):")
    for d in sets.differences:
        numbers = (d.estimate, d.se, d.p, d.p_holm, d.ci_low, d.ci_high)
        estimate, se, p, holm, low, high = (math.nan if value is None else value for value in numbers)
        lines.append(
            f"  {d.system:<20} {d.sets[1]} - {d.sets[0]}: {_number(estimate)} {_number(se)} p {_p(p)} "
            f"Holm {_p(holm)} [{_number(low)}, {_number(high)}] df {_number(math.nan if d.df is None else d.df, digits=1)}"
        )
    return "\n".join(lines)


def format_fragility(fragile: dict) -> str:
    lines = ["Fragility of each significant system (confirmed by refit):"]
    lines.extend(f"  {name}: {found.in_words()}" for name, found in fragile.items() if found is not None)
    if len(lines) == 1:
        lines.append("  no system is significant")
    return "\n".join(lines)


def _stars(p: float) -> str:
    if p != p:  # nan: the reference or an empty estimate
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else "." if p < 0.1 else ""


def _number(value: float, width: int = 9, digits: int = 4) -> str:
    return f"{'-':>{width}}" if value != value else f"{value:>{width}.{digits}f}"


def _p(value: float) -> str:
    return f"{'-':>9}" if value != value else f"{value:>9.3g}"


def format_table(result: bradley_terry.BTResult) -> str:
    """An aligned table of abilities with significance stars, then any problems."""
    width = max(len(name) for name in [*result.item_names, "order effect"])
    header = (
        f"{'item':<{width}} {'estimate':>9} {'se':>9} {'z':>9} {'p':>9}      {'95% CI':^21} {'wins':>6} {'losses':>6}"
    )
    method = "Bias-reduced (Firth) Bradley-Terry" if result.bias_reduced else "Bradley-Terry"
    lines = [
        f"{method} abilities (log-odds) relative to '{result.reference}', "
        f"{result.n_comparisons} comparisons, log-likelihood {result.log_likelihood:.3f}",
        header,
        "-" * len(header),
    ]
    for k, name in enumerate(result.item_names):
        lines.append(
            f"{name:<{width}} {_number(result.estimates[k])} {_number(result.se[k])} {_number(result.z[k], digits=3)} "
            f"{_p(result.p[k])} {_stars(result.p[k]):<4} [{_number(result.ci_low[k])}, {_number(result.ci_high[k])}]"
            f" {int(result.wins[k]):>6} {int(result.losses[k]):>6}"
        )
    effect = result.order_effect
    if effect is not None:
        lines.append(
            f"{'order effect':<{width}} {_number(effect.estimate)} {_number(effect.se)} {_number(effect.z, digits=3)} "
            f"{_p(effect.p)} {_stars(effect.p):<4} [{_number(effect.ci_low)}, {_number(effect.ci_high)}]"
        )
    if result.unlinked:
        lines.append("Not linked with the reference (each relative to the last item of its component, as R prints):")
        lines.extend(
            f"  {effect.name}: {_number(effect.estimate).strip()} (se {_number(effect.se).strip()})"
            for effect in result.unlinked
        )
    lines.append("Signif. codes: *** < 0.001, ** < 0.01, * < 0.05, . < 0.1")
    if not result.converged:
        lines.append("The fit is incomplete:")
    lines.extend(f"  - {problem}" for problem in result.problems)
    return "\n".join(lines)
