"""The LLM judges measured on a study, as the power page plans with them; llm_judging measures them.

analysis sits below llm_judging (surveys <- analysis <- llm_judging, docs/architecture.md) and never
imports it. The power page still offers the LLM judges measured on a study: llm_judging registers the
function that measures them with `provide_measurements` (from its AppConfig.ready), and the page asks
through `measured_on_study`. This module owns the shape of what is measured (the interface between the
two apps); the maths of planning with it is analysis.power.judge. With no provider registered
(llm_judging not installed) the page plans with humans alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from surveys.models import Study


@dataclass(frozen=True)
class MeasuredJudge:
    key: str
    agreement: float | None  # with the human majority, mean over questions
    rho: float | None  # mean over questions
    cells: int  # cells it judged
    human_picks: int  # human picks on those cells (all questions)

    def label(self) -> str:
        agreement = f"{self.agreement:.2f}" if self.agreement is not None else "n/a"
        rho = f"{self.rho:.2f}" if self.rho is not None else "n/a"
        return f"{self.key}: agreement {agreement}, rho {rho}, {self.cells} cells"


@dataclass(frozen=True)
class StudyMeasurements:
    human_agreement: float | None
    judges: list[MeasuredJudge]

    def judge(self, key: str) -> MeasuredJudge | None:
        return next((judge for judge in self.judges if judge.key == key), None)


NOTHING_MEASURED = StudyMeasurements(human_agreement=None, judges=[])

# The registered measuring function, called as measure(study=study); one per process.
_providers: list[Callable[..., StudyMeasurements]] = []


def provide_measurements(measure: Callable[..., StudyMeasurements]) -> None:
    """Register how LLM judges are measured on a study (llm_judging does, once, when Django starts)."""
    _providers[:] = [measure]


def measured_on_study(*, study: Study) -> StudyMeasurements:
    """The LLM judges measured on `study` and its humans' agreement; nothing when no app measures judges."""
    return _providers[0](study=study) if _providers else NOTHING_MEASURED
