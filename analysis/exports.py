"""Files a researcher or reviewer takes away: judgments, results, a BradleyTerry2 file, demographics.

`export_lines` hands out each file a piece at a time (CSV files a line at a time, read from the database
in chunks: a server-side cursor on PostgreSQL), so views and the API stream it whatever the study's
size. Participants are identified by a salted hash of their
Prolific id, never the id itself.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import Counter
from collections.abc import Iterator

from django.conf import settings
from django.http import HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase

from moraljudge.replica import reads_from_replica
from surveys.models import AuditEvent, Judgment, Participant, Study
from surveys.services import authenticity_report
from surveys.services.audit import record_event

from .csv_text import csv_lines
from .models import AnalysisRun
from .results import run_fields
from .results.tables import Bounds, system_rows
from .rscript import BT2_COLUMNS, CHUNK_ROWS, bradleyterry2_rows, bradleyterry2_script
from .services.claim_fragility import FRAGILITY_COLUMNS, fragility_columns
from .services.set_results import set_result_rows

JUDGMENT_COLUMNS = [
    "participant",
    "vignette",
    "question",
    "system_a",
    "system_b",
    "shown_first",
    "winner",
    "loser",
    "winner_position",
    "assignment_position",
    "seconds",
]
RESULT_COLUMNS = [
    "question",
    "system",
    "label",
    "estimate",
    "se",
    "z",
    "p",
    "p_holm",
    "stars",
    "ci_low",
    "ci_high",
    "interval",
    "df",
    "tested",
    "why_not",
    "not_estimable",
    "wald_ci_low",
    "wald_ci_high",
    "boot_ci_low",
    "boot_ci_high",
    "style_estimate",
    "style_se",
    "wins",
    "losses",
    "rank",
    "rank_low",
    "rank_high",
    "rank_claim",
    "band_low",
    "band_high",
    "set",  # "" for the whole study; a set's name for its own fit or a difference (then `compared_with` too)
    "compared_with",  # a difference row: `set` minus this set
    *FRAGILITY_COLUMNS,  # a significant result: the judgments, judges, vignettes it hinges on (refit-confirmed)
]
DEMOGRAPHIC_COLUMNS = ["variable", "value", "n", "percent"]
# The files made of what judges did or said about themselves (the rest are fitted numbers): audited.
PARTICIPANT_EXPORTS = ("judgments.csv", "bradleyterry2.csv", "demographics.csv")


def hashed_participant(prolific_pid: str) -> str:
    """A stable pseudonym: HMAC-SHA256 of the Prolific id keyed with SECRET_KEY, 16 hex digits."""
    return hmac.new(settings.SECRET_KEY.encode(), prolific_pid.encode(), hashlib.sha256).hexdigest()[:16]


# ---------------------------------------------------------------- judgments


@reads_from_replica
def judgment_rows(*, study: Study):
    """The valid judgments (those the analysis uses), one row per pick, in judgment order."""
    judgments = (
        Judgment.objects.valid()
        .for_study(study)
        .order_by("id")
        .values_list(
            "assignment__participant__prolific_pid",
            "assignment__vignette__key",
            "question__key",
            "assignment__cell__answer_a__system__key",
            "assignment__cell__answer_b__system__key",
            "assignment__first_answer__system__key",
            "winner__system__key",
            "loser__system__key",
            "winner_position",
            "assignment__position",
            "seconds_on_page",
        )
    )
    pseudonyms: dict[str, str] = {}
    for pid, vignette, question, a, b, first, winner, loser, position, page, seconds in judgments.iterator(
        chunk_size=CHUNK_ROWS
    ):
        if pid not in pseudonyms:
            pseudonyms[pid] = hashed_participant(pid)
        yield {
            "participant": pseudonyms[pid],
            "vignette": vignette,
            "question": question,
            "system_a": a,
            "system_b": b,
            "shown_first": first,
            "winner": winner,
            "loser": loser,
            "winner_position": position,
            "assignment_position": page,
            "seconds": round(seconds, 1),
        }


# ---------------------------------------------------------------- results


def result_rows(*, run: AnalysisRun):
    """One row per question and system, in the study's question order; questions without a fit have none. A study
    with vignette sets adds, per question and system, a row per set and a row per difference between sets.

    se, p, Holm p, stars and the interval are the headline's (`interval` names it, `df` its t reference per
    system, `tested` whether it is the headline test: where it is not, p, Holm p and stars are empty and `why_not`
    says why); a run stored before the headline gives the Wald ones (interval "wald"). rank_low-rank_high is the
    rank set (1 = best; rank_claim says "best with 95% confidence" only for the set {1}) and band_low-band_high
    the simultaneous 95% band (docs/statistics.md, "Ranks"); empty where the run has no rank claim."""
    fitted = run.read_results()
    for question in fitted.questions:
        headline = question.headline
        ranks = {item.item: item for item in question.ranks.items} if question.ranks else {}
        for row in system_rows(question, labels=fitted.labels()):
            ranked = ranks.get(row.system)
            boot, styled = row.bounds("bootstrap"), row.alternative("style_controlled")
            wald = row.bounds("wald") if headline else Bounds("wald", row.ci_low, row.ci_high)
            yield {
                "question": row.question,
                "system": row.system,
                "label": row.label,
                "estimate": row.estimate,
                "se": row.se,
                "z": row.z,
                "p": row.p,
                "p_holm": row.p_holm,
                "stars": row.stars,
                "ci_low": row.ci_low,
                "ci_high": row.ci_high,
                "interval": headline.interval if headline else "wald",
                "df": row.df,
                "tested": headline.tested if headline else True,
                "why_not": headline.why if headline and not headline.tested else "",
                "not_estimable": row.not_estimable,
                "wald_ci_low": wald.low,
                "wald_ci_high": wald.high,
                "boot_ci_low": boot.low,
                "boot_ci_high": boot.high,
                "style_estimate": styled.estimate,
                "style_se": styled.se,
                "wins": row.wins,
                "losses": row.losses,
                "rank": ranked.rank if ranked else None,
                "rank_low": ranked.rank_low if ranked else None,
                "rank_high": ranked.rank_high if ranked else None,
                "rank_claim": ranked.claim if ranked else "",
                "band_low": ranked.band_low if ranked else None,
                "band_high": ranked.band_high if ranked else None,
            } | fragility_columns(question.fragility, row.system)
        if question.by_set is not None:
            yield from set_result_rows(question, labels=fitted.labels())


def results_document(*, run: AnalysisRun) -> dict:
    """The whole snapshot: what was fitted, on which data, by which code, and every result.

    Results are in the current schema version whatever shape the run was stored in.
    """
    return {
        "study": run.study.slug,
        "run": run.pk,
        "created_at": run.created_at.isoformat(),
        "trigger": run.trigger,
        "n_judgments": run.n_judgments,
        "n_participants": run.n_participants,
        "data_hash": run.data_hash,
        "git_revision": run.git_revision,
        "parameters": run.parameters,
    } | run_fields(run.read_results())


def results_json(*, run: AnalysisRun) -> str:
    return json.dumps(results_document(run=run), indent=2, allow_nan=False)


# ---------------------------------------------------------------- demographics


@reads_from_replica
def demographic_rows(*, study: Study):
    """Counts and percentages per answer of each demographic question, over valid participants.

    A multiple-choice answer (a list) counts once per option chosen; percentages are of the
    valid participants, so those of a multiple-choice variable may sum past 100.
    """
    answers = Participant.objects.filter(
        study=study, status=Participant.Status.COMPLETED, exclusion="", is_preview=False
    ).values_list("demographics", flat=True)
    total = 0
    variables: dict[str, Counter] = {}  # grows with distinct answers, not with participants
    for answer in answers.iterator(chunk_size=CHUNK_ROWS):
        total += 1
        for variable, value in (answer or {}).items():
            values = value if isinstance(value, list) else [value]
            for item in values:
                variables.setdefault(variable, Counter())["" if item is None else str(item)] += 1
    yield {"variable": "valid participants", "value": "", "n": total, "percent": 100.0 if total else 0.0}
    for variable in sorted(variables):
        for value, n in sorted(variables[variable].items(), key=lambda pair: (-pair[1], pair[0])):
            yield {"variable": variable, "value": value, "n": n, "percent": round(100 * n / total, 1)}


EXPORTS = {
    # name: (content type, needs a finished run)
    "judgments.csv": ("text/csv", False),
    "results.csv": ("text/csv", True),
    "results.json": ("application/json", True),
    "bradleyterry2.csv": ("text/csv", False),
    "bradleyterry2.R": ("text/plain", False),
    "demographics.csv": ("text/csv", False),
    "authenticity.csv": ("text/csv", False),
}


CSV_EXPORTS = {
    "judgments.csv": (JUDGMENT_COLUMNS, lambda study, run: judgment_rows(study=study)),
    "results.csv": (RESULT_COLUMNS, lambda study, run: result_rows(run=run)),
    "bradleyterry2.csv": (BT2_COLUMNS, lambda study, run: bradleyterry2_rows(study=study)),
    "demographics.csv": (DEMOGRAPHIC_COLUMNS, lambda study, run: demographic_rows(study=study)),
    # How each human answer was written and how close it is to other answers (docs/authenticity.md).
    "authenticity.csv": (authenticity_report.CSV_HEADER, lambda study, run: authenticity_report.csv_rows(study)),
}


def export_lines(*, study: Study, name: str, run: AnalysisRun | None) -> Iterator[str]:
    """One export by file name, a piece at a time: CSV files row by row, the small ones whole.

    Nothing is read until the first piece is asked for, so a streamed response reads as it sends.
    Results need a run (the caller checks there is one).
    """
    if name in CSV_EXPORTS:
        columns, rows = CSV_EXPORTS[name]
        return csv_lines(columns, rows(study, run))
    return _whole(study=study, name=name, run=run)


def _whole(*, study: Study, name: str, run: AnalysisRun | None) -> Iterator[str]:
    """The small exports (a JSON document, an R script) in one piece."""
    makers = {
        "results.json": lambda: results_json(run=_needed(run)),
        "bradleyterry2.R": lambda: bradleyterry2_script(study=study, run=run),
    }
    yield makers[name]()


def _needed(run: AnalysisRun | None) -> AnalysisRun:
    assert run is not None  # results need a run; the caller checks there is one
    return run


def export_response(*, study: Study, name: str, run: AnalysisRun | None, by=None) -> HttpResponseBase:
    """The export as a download, for the dashboard and the API alike.

    CSV files stream (the first row leaves before the last is read, memory stays one chunk of rows);
    the JSON document and R script are small and go whole.
    """
    content_type, _ = EXPORTS[name]
    if name in PARTICIPANT_EXPORTS:  # who took the judges' data away, and when
        record_event(
            action=AuditEvent.Action.DATA_EXPORTED, user=by, study=study, file=name, run=run.pk if run else None
        )
    pieces = export_lines(study=study, name=name, run=run)
    response: HttpResponseBase
    if name in CSV_EXPORTS:
        response = StreamingHttpResponse(pieces, content_type=content_type)
    else:
        response = HttpResponse("".join(pieces), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{name}"'
    return response
