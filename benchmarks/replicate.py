"""The paper's design replicated by simulation: bias, power and interval coverage per reported effect.

Run:
    python benchmarks/replicate.py --study tests/fixtures/paper/exp1.study.json \\
        --estimates tests/fixtures/paper/reported_estimates.json --replications 1000 [--answer-sd 0.3]

It plants the reported estimates as true abilities (log-odds against the study's reference; null, a
value reported only in words, or a system not named = 0), then

1. runs the full design once through the real survey services (the study file imported into a
   temporary SQLite database, a placeholder answer per system and vignette, go live, simulated judges
   via analysis.services.simulated_judges until the cells are full) and refits it with analysis.services.refit_study,
   printing the stored estimates beside the planted ones;
2. repeats the analysis alone N times on freshly simulated judgments of the same design
   (analysis.bradley_terry.simulate_judgments: every pair on every vignette `repetitions` times,
   `vignettes_per_participant` judgments per judge) and prints per effect: planted, mean estimate,
   bias, SD, mean Wald SE, power at alpha = 0.05 (Wald unadjusted, Wald with Holm within the question,
   and the two-way cluster-robust test), and the coverage of the 95% Wald interval, the participant
   bootstrap percentile interval and the two-way (participants x answers) cluster-robust interval.
   For a planted 0, "power" is the false-positive rate.

The fit is the dashboard's: plain Bradley-Terry per question (with `--fit-order-effect`, the order
effect too). The Wald columns are not the dashboard's test (it reports its headline interval with Holm;
`manage.py power` simulates that one, docs/power.md). Output is Markdown, ready for docs/replication.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis import bradley_terry as bt  # noqa: E402  (pure numpy: no Django needed)

ALPHA = 0.05


def planted_abilities(estimates: dict, experiment: str, questions: list[str]) -> tuple[dict, list[str]]:
    """question -> system -> planted log-odds; and notes on values that were not numbers."""
    reported, notes, planted = estimates[experiment], [], {}
    for question in questions:
        planted[question] = {}
        for system, value in (reported.get(question) or {}).items():
            if value is not None and not isinstance(value, int | float):
                notes.append(f"{question}/{system} was reported as {value!r} without a value: planted 0")
                value = None
            planted[question][system] = float(value or 0.0)
    return planted, notes


# ---------------------------------------------------------------- once through the survey services


def setup_django() -> None:
    tmp = tempfile.mkdtemp(prefix="mj-replicate-")
    os.environ["DATABASE_URL"] = f"sqlite:///{tmp}/replicate.sqlite3"  # never the real database
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ["DEBUG"] = "1"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "moraljudge.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def through_the_survey(study_file: dict, planted: dict, args) -> dict:
    """Import, answer, go live, judge until full, refit: the stored run's per-question results."""
    from analysis.models import AnalysisRun
    from analysis.services import refit_study
    from analysis.services.simulated_judges import simulate_judges
    from surveys.models import Study
    from surveys.services.answer_records import create_answer
    from surveys.services.answer_shape import FeatureIn
    from surveys.services.lifecycle import go_live
    from surveys.services.study_files import import_study

    study_file = {key: value for key, value in study_file.items() if key != "answers"} | {"status": "draft"}
    study = import_study(study_file)
    if args.repetitions:
        Study.objects.filter(pk=study.pk).update(repetitions=args.repetitions)
    for system in study.systems.all():
        for vignette in study.vignettes.all():
            create_answer(
                system=system,
                vignette=vignette,
                features=[FeatureIn(feature="harm", weight=100, reason="placeholder")],
                action=f"{system.key} on {vignette.key}",
                selected=True,
            )
    study = go_live(study=Study.objects.get(pk=study.pk))
    places = sum(study.cells.values_list("target", flat=True))
    judges = math.ceil(places / study.vignettes_per_participant)
    abilities = {f"{q}:{s}": value for q, systems in planted.items() for s, value in systems.items()}
    started = time.perf_counter()
    completed = simulate_judges(
        study=study,
        judges=judges,
        abilities=abilities,
        seed=args.seed,
        order_effect=args.order_effect,
        answer_sd=args.answer_sd,
        inattentive=args.inattentive,
    )
    simulated = time.perf_counter() - started
    parameters = {"order_effect": args.fit_order_effect, "bootstrap": args.bootstrap, "split_halves": 0}
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=parameters)
    if run.status != AnalysisRun.Status.DONE:
        raise SystemExit(f"The refit failed: {run.error}")
    questions = study.questions.count()
    return {
        "run": run,
        "judges": judges,
        "completed": completed,
        "places": places,
        "questions": questions,
        "seconds": simulated,
    }


def print_survey_run(once: dict, planted: dict) -> None:
    run = once["run"]
    print(
        f"Once through the survey services: {once['completed']} of {once['judges']} simulated judges completed "
        f"({once['seconds']:.0f} s), {run.n_judgments} valid judgments ({once['questions']} questions on "
        f"{run.n_judgments // once['questions']} of the design's {once['places']} places), refit as run {run.pk}.\n"
    )
    print("| question | system | planted | estimate | SE | (estimate - planted) / SE |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for result in run.read_results().questions:
        question = result.question
        for item in result.fit.items if result.fit else []:
            if item.item == run.parameters["reference"]:
                continue
            truth = planted[question].get(item.item, 0.0)
            gap = (item.estimate - truth) / item.se
            print(f"| {question} | {item.item} | {truth:+.2f} | {item.estimate:+.3f} | {item.se:.3f} | {gap:+.2f} |")
    print()


# ---------------------------------------------------------------- the analysis alone, N times


def replicate(truth: np.ndarray, reference: int, design: dict, args, rng: np.random.Generator) -> dict:
    """N simulated studies of one question: per replication and item, what each analysis says."""
    n, k = args.replications, len(truth)
    out = {name: np.full((n, k), np.nan) for name in ("estimate", "se", "p", "p_holm", "robust_p")}
    out |= {name: np.zeros((n, k), bool) for name in ("wald_covers", "boot_covers", "robust_covers")}
    out["boot_done"] = np.zeros(n, bool)
    for r in range(n):
        data = bt.simulate_judgments(
            truth,
            vignettes=design["vignettes"],
            repetitions=design["repetitions"],
            per_judge=design["per_judge"],
            rng=rng,
            answer_sd=args.answer_sd,
            order_effect=args.order_effect,
            inattentive=args.inattentive,
        )
        first = data.first if args.fit_order_effect else None
        result = bt.fit(data.winners, data.losers, k, reference=reference, first=first)
        out["estimate"][r], out["se"][r], out["p"][r] = result.estimates, result.se, result.p
        out["p_holm"][r] = bt.holm(result.p)
        out["wald_covers"][r] = (result.ci_low <= truth) & (truth <= result.ci_high)
        robust = bt.cluster_robust(
            data.winners,
            data.losers,
            k,
            reference=reference,
            judges=data.judges,
            vignettes=data.vignettes,
            first=first,
            fitted=result,
        )
        out["robust_p"][r] = robust.p
        out["robust_covers"][r] = (robust.ci_low <= truth) & (truth <= robust.ci_high)
        if r < args.bootstrap_replications and args.bootstrap > 0:
            boot = bt.bootstrap(
                data.winners, data.losers, k, reference=reference, clusters=data.judges, rng=rng, first=first,
                n_boot=args.bootstrap,
            )  # fmt: skip
            out["boot_covers"][r] = (boot.ci_low <= truth) & (truth <= boot.ci_high)
            out["boot_done"][r] = True
    return out


def print_replications(question: str, names: list[str], truth: np.ndarray, reference: int, out: dict) -> list[dict]:
    rows = []
    booted = out["boot_done"]
    for k, name in enumerate(names):
        if k == reference:
            continue
        rows.append(
            {
                "question": question,
                "system": name,
                "planted": truth[k],
                "mean": np.nanmean(out["estimate"][:, k]),
                "sd": np.nanstd(out["estimate"][:, k], ddof=1),
                "se": np.nanmean(out["se"][:, k]),
                "power": np.mean(out["p"][:, k] < ALPHA),
                "power_holm": np.mean(out["p_holm"][:, k] < ALPHA),
                "power_robust": np.mean(out["robust_p"][:, k] < ALPHA),
                "wald": np.mean(out["wald_covers"][:, k]),
                "boot": np.mean(out["boot_covers"][booted, k]) if booted.any() else np.nan,
                "robust": np.mean(out["robust_covers"][:, k]),
            }
        )
    for row in rows:
        print(
            f"| {row['question']} | {row['system']} | {row['planted']:+.2f} | {row['mean']:+.3f} | "
            f"{row['mean'] - row['planted']:+.3f} | {row['sd']:.3f} | {row['se']:.3f} | {row['power']:.2f} | "
            f"{row['power_holm']:.2f} | {row['power_robust']:.2f} | {row['wald']:.3f} | {_share(row['boot'])} | "
            f"{row['robust']:.3f} |"
        )
    return rows


def _span(name: str, values: list[float]) -> str:
    """The values as "Wald power 0.26" when they round the same, else as "Wald power 0.15 to 0.27"."""
    low, high = f"{min(values):.2f}", f"{max(values):.2f}"
    return f"{name} {low}" if low == high else f"{name} {low} to {high}"


def _share(value: float) -> str:
    return "–" if np.isnan(value) else f"{value:.3f}"


def summarise(rows: list[dict], args) -> None:
    bias = np.array([abs(r["mean"] - r["planted"]) for r in rows])
    column = {key: np.array([r[key] for r in rows]) for key in ("wald", "boot", "robust", "sd")}
    nonzero = [r for r in rows if r["planted"] != 0]
    print(
        f"\nlargest |mean - planted| {bias.max():.3f} (Monte Carlo SE about {np.mean(column['sd']) / math.sqrt(args.replications):.3f}); "
        f"coverage over effects, mean [min, max]: Wald {column['wald'].mean():.3f} "
        f"[{column['wald'].min():.3f}, {column['wald'].max():.3f}], "
        + (
            f"bootstrap {np.mean(column['boot']):.3f} [{np.min(column['boot']):.3f}, {np.max(column['boot']):.3f}], "
            if np.isfinite(column["boot"]).all()
            else "no bootstrap, "
        )
        + f"two-way robust {column['robust'].mean():.3f} [{column['robust'].min():.3f}, {column['robust'].max():.3f}]"
    )
    if nonzero:
        small = [r for r in nonzero if 0.10 <= abs(r["planted"]) <= 0.14]
        if small:
            print(f"{_span('effects of size', [abs(r['planted']) for r in small])}: "
                  f"{_span('Wald power', [r['power'] for r in small])}, "
                  f"{_span('with Holm', [r['power_holm'] for r in small])}")  # fmt: skip
    zero = [r for r in rows if r["planted"] == 0]
    if zero:
        print(
            f"planted 0 ({len(zero)} effects): false-positive rate Wald {np.mean([r['power'] for r in zero]):.3f}, "
            f"Holm {np.mean([r['power_holm'] for r in zero]):.3f}, robust {np.mean([r['power_robust'] for r in zero]):.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--study", type=Path, required=True, help="a study file (.study.json)")
    parser.add_argument("--estimates", type=Path, required=True, help="reported estimates (reported_estimates.json)")
    parser.add_argument("--experiment", help="the key in the estimates file (default: the study's slug)")
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--repetitions", type=int, help="judgments per pair and vignette (default: the study's)")
    parser.add_argument("--answer-sd", type=float, default=0.0, help="answer-level SD tau (default 0)")
    parser.add_argument("--order-effect", type=float, default=0.0, help="planted order effect (default 0)")
    parser.add_argument("--fit-order-effect", action="store_true", help="fit the order effect, as the setting")
    parser.add_argument("--inattentive", type=float, default=0.0, help="share of judges picking at random")
    parser.add_argument("--bootstrap", type=int, default=200, help="bootstrap replicates per fit (0: none)")
    parser.add_argument("--bootstrap-replications", type=int, default=10**9, help="bootstrap only the first M")
    parser.add_argument("--skip-survey", action="store_true", help="only the N analyses, not the survey run")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()

    study_file = json.loads(args.study.read_text(encoding="utf-8"))
    estimates = json.loads(args.estimates.read_text(encoding="utf-8"))
    experiment = args.experiment or study_file["slug"]
    names = [system["key"] for system in study_file["systems"]]
    questions = [question["key"] for question in study_file["questions"]]
    reference = names.index(study_file["reference_system"])
    planted, notes = planted_abilities(estimates, experiment, questions)
    design = {
        "vignettes": len(study_file["vignettes"]),
        "repetitions": args.repetitions or study_file["design"]["repetitions"],
        "per_judge": study_file["design"]["vignettes_per_participant"],
    }
    print(
        f"## {study_file['name']}\n\n{len(names)} systems (reference {names[reference]}), {design['vignettes']} vignettes, "
        f"{design['repetitions']} judgments per pair and vignette, {design['per_judge']} per judge; "
        f"answer-level SD {args.answer_sd}, order effect {args.order_effect}, inattentive {args.inattentive}; "
        f"{args.replications} replications, bootstrap {args.bootstrap} per fit on "
        f"{min(args.bootstrap_replications, args.replications)} of them; seed {args.seed}.\n"
    )
    for note in notes:
        print(f"- {note}")
    if notes:
        print()
    if not args.skip_survey:
        setup_django()
        print_survey_run(through_the_survey(study_file, planted, args), planted)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(
        "| question | system | planted | mean | bias | SD | mean SE | power | Holm | robust | "
        "Wald cover | boot cover | robust cover |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = []
    for question in questions:
        truth = np.array([planted[question].get(name, 0.0) for name in names])
        truth -= truth[reference]
        out = replicate(truth, reference, design, args, rng)
        rows += print_replications(question, names, truth, reference, out)
    summarise(rows, args)
    print(f"({time.perf_counter() - started:.0f} s for the replications)")


if __name__ == "__main__":
    main()
