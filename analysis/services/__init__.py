"""Analysis services: read valid judgments, fit per question, store AnalysisRun snapshots.

reading.py turns a study's valid judgments into arrays; fitting.py fits one question (with
bootstrap, Holm, style control and diagnostics); refits.py stores runs and queues refits (request_refit: the one entry of both refit buttons);
progress.py reports a study's progress and plans power; power_plan.py composes the power page (each named test's power, then the judge); power_runs.py simulates the reported test's power off the request (PowerRun, resumable); measured_judges.py is how the power page gets the
LLM judges llm_judging measured (a hook: analysis never imports llm_judging); simulated_judges.py runs the
demo's simulated judges through the survey's services (`manage.py simulate_judges`). Writes only AnalysisRun
rows (and, for the demo's simulated judges, what the survey's services write).
"""

from .fitting import DEFAULT_PARAMETERS, fit_question, halo_correlations
from .power_runs import PowerFigures, PowerPlanRun, power_of_run, request_power_run, simulate_power_run
from .progress import plan_power, study_progress
from .reading import QuestionData, StudyData, answer_word_counts, read_study_data
from .records import json_safe, stars
from .refits import (
    RefitOutcome,
    RefitRequest,
    fail_interrupted_runs,
    git_revision,
    refit_live_studies,
    refit_study,
    request_refit,
)

__all__ = [
    "DEFAULT_PARAMETERS",
    "PowerFigures",
    "PowerPlanRun",
    "QuestionData",
    "RefitOutcome",
    "RefitRequest",
    "StudyData",
    "answer_word_counts",
    "fail_interrupted_runs",
    "fit_question",
    "git_revision",
    "halo_correlations",
    "json_safe",
    "plan_power",
    "power_of_run",
    "read_study_data",
    "refit_live_studies",
    "refit_study",
    "request_power_run",
    "request_refit",
    "simulate_power_run",
    "stars",
    "study_progress",
]
