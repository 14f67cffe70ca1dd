"""The reported test's power at a planned design, simulated off the request: PowerRun rows and their task.

`request_power_run` finds the run of a design (the same design asked twice is one row) or creates it and sends
`simulate_power` to a worker, so the page and the API answer at once ("simulating", 202) and read the figures
when they are there. `simulate_power_run` (the task's body) simulates the design and both levers
(analysis/power/levers.py), saving each design point's tally after every batch: a worker that dies loses at
most a batch, and the next request re-sends a run that has not saved for STALLED (it resumes, same figures).
Without a broker (the quickstart) the simulation runs in the request.

`power_of_run` reads a run's figures from its tallies alone (no simulation): the levers' search is repeated
on the saved points, which is cheap.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import timedelta

import kombu.exceptions
from django.db import IntegrityError, transaction
from django.utils import timezone

from moraljudge.celery import app
from surveys.models import Study

from ..models import AnalysisRun, PowerRun
from ..power.answer_sd import answer_sd
from ..power.levers import Levers, plan_levers
from ..power.reported_test import TARGET, Design, ReportedTestPower, Tally, simulate, summary

log = logging.getLogger("analysis.services")

STALLED = timedelta(minutes=3)  # a simulating run that has saved nothing for this long is sent again
TASK = "analysis.tasks.simulate_power"


@dataclass(frozen=True)
class PowerPlanRun:
    """What a run asks for: the design, the simulated studies at it and per lever point, the seed."""

    design: Design
    simulations: int
    lever_simulations: int
    seed: int
    target: float = TARGET

    def as_json(self) -> dict:
        return {
            "design": self.design.as_dict(),
            "simulations": self.simulations,
            "lever_simulations": self.lever_simulations,
            "seed": self.seed,
            "target": self.target,
        }

    @property
    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.as_json(), sort_keys=True).encode()).hexdigest()

    @classmethod
    def from_json(cls, data: dict) -> PowerPlanRun:
        design = {key: data["design"][key] for key in Design.__dataclass_fields__}
        design["abilities"] = tuple(design["abilities"])
        return cls(Design(**design), data["simulations"], data["lever_simulations"], data["seed"], data["target"])


@dataclass(frozen=True)
class PowerFigures:
    reported: ReportedTestPower
    levers: Levers


class NotSimulated(Exception):
    """A design point the run has not finished simulating."""


def request_power_run(*, study: Study, plan: PowerPlanRun) -> PowerRun:
    """The run of `plan` for `study`: found, or created and simulated by a worker (in the request without one)."""
    run = PowerRun.objects.filter(study=study, key=plan.key).first()
    if run is None:
        try:
            with transaction.atomic():
                run = PowerRun.objects.create(study=study, key=plan.key, design=plan.as_json())
        except IntegrityError:  # another request created it meanwhile
            run = PowerRun.objects.get(study=study, key=plan.key)
        _start(run)
    elif run.status == PowerRun.Status.SIMULATING and timezone.now() - run.updated_at > STALLED:
        PowerRun.objects.filter(pk=run.pk).update(updated_at=timezone.now())
        _start(run)  # its worker died or the message was lost: resume from the saved tallies
    run.refresh_from_db()
    return run


def _start(run: PowerRun) -> None:
    if app.conf.task_always_eager:  # no broker configured (the quickstart): simulate in the request
        simulate_power_run(run_id=run.pk)
        return
    try:
        with app.connection_for_write() as connection:
            app.send_task(TASK, args=(run.pk,), connection=connection)
    except (kombu.exceptions.OperationalError, OSError) as exc:
        # Nothing lost: the run stays "simulating" and the next request after STALLED sends it again.
        log.warning("power run %s not queued: broker unreachable (%s)", run.pk, exc)


def simulate_power_run(*, run_id: int) -> None:
    """Simulate a run to the end, resuming from its saved tallies; a duplicate delivery of a done run is a no-op."""
    run = PowerRun.objects.filter(pk=run_id).first()
    if run is None or run.status != PowerRun.Status.SIMULATING:
        return
    plan = PowerPlanRun.from_json(run.design)
    tallies = dict(run.tallies)

    def run_point(design: Design, *, simulations: int, seed: int) -> ReportedTestPower:
        name = point_name(design, simulations)

        def save(tally: Tally) -> None:
            tallies[name] = tally.as_dict()
            PowerRun.objects.filter(pk=run_id).update(tallies=tallies, updated_at=timezone.now())

        saved = Tally.from_dict(tallies[name]) if name in tallies else None
        return simulate(design, simulations=simulations, seed=seed, tally=saved, after_batch=save)

    try:
        planned = run_point(plan.design, simulations=plan.simulations, seed=plan.seed)
        plan_levers(
            plan.design,
            simulations=plan.lever_simulations,
            seed=plan.seed,
            target=plan.target,
            run=run_point,
            planned=planned,
        )
    except Exception as exc:
        PowerRun.objects.filter(pk=run_id).update(
            status=PowerRun.Status.FAILED, error=f"{type(exc).__name__}: {exc}", finished_at=timezone.now()
        )
        raise
    PowerRun.objects.filter(pk=run_id, status=PowerRun.Status.SIMULATING).update(
        status=PowerRun.Status.DONE, finished_at=timezone.now()
    )


def point_name(design: Design, simulations: int) -> str:
    return f"v{design.vignettes}-r{design.repetitions}-n{simulations}"


def power_of_run(run: PowerRun) -> PowerFigures | None:
    """A finished run's figures from its tallies (None while it is simulating or when it failed)."""
    if run.status != PowerRun.Status.DONE:
        return None
    plan = PowerPlanRun.from_json(run.design)

    def stored(design: Design, *, simulations: int, seed: int) -> ReportedTestPower:
        tally = run.tallies.get(point_name(design, simulations))
        if tally is None or tally["studies"] < simulations:
            raise NotSimulated(point_name(design, simulations))
        return summary(design, Tally.from_dict(tally), seed=seed)

    try:
        planned = stored(plan.design, simulations=plan.simulations, seed=plan.seed)
        levers = plan_levers(
            plan.design,
            simulations=plan.lever_simulations,
            seed=plan.seed,
            target=plan.target,
            run=stored,
            planned=planned,
        )
    except NotSimulated:
        return None
    return PowerFigures(planned, levers)


ASSUMED_ANSWER_SD = 0.4


@dataclass(frozen=True)
class AnswerSdPrefill:
    value: float
    source: str  # where it came from, in words


def answer_sd_prefill(study: Study) -> AnswerSdPrefill:
    """tau to plan with: estimated from the study's latest refit (its pilot's judgments, or an earlier wave's),
    or ASSUMED_ANSWER_SD with that said."""
    run = AnalysisRun.objects.latest_for(study)
    if run is not None:
        per_vignette = []
        for question in run.read_results().questions:
            fits = question.by_vignette
            for k in range(len(run.systems)):
                per_vignette.append(
                    (
                        [fit.estimates[k] if k < len(fit.estimates) else None for fit in fits],
                        [fit.se[k] if k < len(fit.se) else None for fit in fits],
                    )
                )
        estimated = answer_sd(per_vignette)
        if estimated is not None:
            value, used = estimated
            return AnswerSdPrefill(
                round(value, 3),
                f"Estimated from this study's refit {run.pk} of {run.created_at:%Y-%m-%d} ({run.n_judgments} "
                f"judgments): the spread of each system's per-vignette estimates beyond their noise, "
                f"{used} system × question estimates averaged. Few vignettes make it rough: overwrite it if you know better.",
            )
    return AnswerSdPrefill(
        ASSUMED_ANSWER_SD,
        f"Assumed {ASSUMED_ANSWER_SD}: this study has no refit with at least 3 vignettes to estimate it from yet "
        "(a pilot's refit prefills it). At tau 0 answers of a system are all equally good; the seed design's "
        "figures are given at tau 0 and 0.4.",
    )
