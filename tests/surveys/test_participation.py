"""The participant lifecycle's tables, row by row, against a copy written out here; and that every
caller changes a participant's lifecycle fields only through services/participation.py.

A changed rule fails here first: change the EXPECTED tables below in the same commit, on purpose.
"""

import ast
from pathlib import Path

import pytest
from django.db.models import F

from surveys.models import Assignment, Cell, Participant
from surveys.services import participation
from surveys.services.allocation import allocate
from surveys.services.errors import TransitionNotAllowed
from surveys.services.lifecycle import go_live
from surveys.services.participation import ANY, Event, StepName, apply_event
from tests.conftest import make_study

# status -> (step, Study fields with its completion code)
EXPECTED_STATUSES = {
    "started": ("consent", ()),
    "no-consent": ("no-consent", ("no_consent_code",)),
    "consented": ("demographics", ()),
    "judging": (None, ()),
    "completed": ("complete", ("completion_code",)),
    "failed-attention": ("complete", ("failed_attention_code", "completion_code")),
    "screened-out": ("full", ("screened_out_code",)),
    "returned": ("ended", ()),
    "timed-out": ("ended", ()),
    "expired": ("ended", ()),
    "unverified": ("ended", ()),
}

# (from status, event) -> (to status or None for "stays", places given back, ends, exclusion recorded)
EXPECTED_RULES = {
    ("started", "study-full"): ("screened-out", True, True, ""),
    ("started", "consent-given"): ("consented", False, False, ""),
    ("started", "consent-refused"): ("no-consent", True, True, ""),
    ("consented", "pages-allocated"): ("judging", False, False, ""),
    ("consented", "study-full"): ("screened-out", True, True, ""),
    ("judging", "attention-passed"): ("completed", False, True, ""),
    ("judging", "attention-failed"): ("failed-attention", True, True, ""),
    ("*", "quality-flagged"): (None, True, False, ""),
    ("*", "reservation-expired"): ("expired", True, False, ""),
    ("*", "returned"): ("returned", True, False, "returned"),
    ("*", "timed-out"): ("timed-out", True, False, "returned"),
    ("*", "excluded-by-researcher"): (None, True, False, "researcher"),
    ("*", "not-on-prolific"): ("unverified", True, False, "no-prolific-submission"),
}

EXPECTED_PROLIFIC_EVENTS = {"RETURNED": "returned", "TIMED-OUT": "timed-out"}

EXPECTED_REVIEWABLE = {"no-consent", "completed", "failed-attention", "screened-out"}

LIFECYCLE_FIELDS = {"status", "exclusion", "flags", "prolific_status", "review_status"}


def test_the_status_table_is_as_written():
    actual = {
        str(status): (info.step and str(info.step), info.codes) for status, info in participation.STATUSES.items()
    }
    assert actual == EXPECTED_STATUSES
    assert set(participation.STATUSES) == set(Participant.Status.values)
    assert set(participation.REVIEWABLE) == EXPECTED_REVIEWABLE


def test_the_transition_table_is_as_written():
    actual = {
        (str(status), str(event)): (rule.to and str(rule.to), rule.gives_back, rule.ends, str(rule.exclusion))
        for (status, event), rule in participation.RULES.items()
    }
    assert actual == EXPECTED_RULES
    assert {str(event) for _, event in participation.RULES} == set(Event)  # every event has a rule


def test_prolific_statuses_map_to_events_as_written():
    assert {str(k): str(v) for k, v in participation.PROLIFIC_EVENTS.items()} == EXPECTED_PROLIFIC_EVENTS
    assert set(participation.PROLIFIC_EVENTS) <= set(Participant.ProlificStatus.values)


def test_step_names_are_the_judging_templates():
    templates = Path(__file__).resolve().parents[2] / "templates" / "surveys" / "judging"
    ending = {StepName.COMPLETE, StepName.NO_CONSENT, StepName.FULL, StepName.ENDED}
    assert all((templates / f"{step.value}.html").exists() for step in ending)


def _cases():
    """Every (status, event): the expected row, or None where no rule lets the event happen."""
    for status in EXPECTED_STATUSES:
        for event in Event:
            yield status, str(event), EXPECTED_RULES.get((status, str(event))) or EXPECTED_RULES.get((ANY, str(event)))


@pytest.fixture
def judge(db):
    """A live study and a participant holding one completed and one reserved page."""
    study = go_live(study=make_study(vignettes=2, vignettes_per_participant=2))
    participant = Participant.objects.create(study=study, prolific_pid="p" * 24, status="judging")
    done, _ = allocate(participant=participant)
    Assignment.objects.filter(pk=done.pk).update(status=Assignment.Status.COMPLETED)
    Cell.objects.filter(pk=done.cell_id).update(reserved=F("reserved") - 1, completed=F("completed") + 1)
    return participant


def _places(participant) -> int:
    cells = Cell.objects.filter(study=participant.study_id)
    return sum(cell.completed + cell.reserved for cell in cells)


@pytest.mark.django_db
@pytest.mark.parametrize(("status", "event", "row"), list(_cases()))
def test_each_row_does_what_the_table_says(judge, status, event, row):
    Participant.objects.filter(pk=judge.pk).update(status=status)
    flags = [{"code": "too-fast", "reason": "judged in 10 s"}] if event == Event.QUALITY_FLAGGED else None
    if row is None:
        with pytest.raises(TransitionNotAllowed):
            apply_event(participant=judge, event=Event(event), flags=flags)
        assert Participant.objects.get(pk=judge.pk).status == status
        assert _places(judge) == 2
        return
    to, gives_back, ends, exclusion = row
    transition = apply_event(participant=judge, event=Event(event), flags=flags)
    stored = Participant.objects.get(pk=judge.pk)
    assert stored.status == (to or status)
    assert transition.participant.status == stored.status
    assert (stored.finished_at is not None) == ends
    assert stored.exclusion == (exclusion or ("too-fast" if flags else ""))
    assert transition.released == (2 if gives_back else 0)
    assert _places(judge) == (0 if gives_back else 2)
    # The same event again gives nothing back a second time.
    if participation.allows(stored.status, Event(event)):
        assert apply_event(participant=judge, event=Event(event), flags=flags).released == 0


@pytest.mark.django_db
def test_an_excluded_participant_keeps_the_first_exclusion(judge):
    apply_event(participant=judge, event=Event.EXCLUDED_BY_RESEARCHER)
    apply_event(participant=judge, event=Event.RETURNED)
    stored = Participant.objects.get(pk=judge.pk)
    assert (stored.status, stored.exclusion) == ("returned", "researcher")


@pytest.mark.django_db
def test_the_completion_code_follows_the_status_table(judge):
    study = judge.study
    study.completion_code, study.no_consent_code, study.screened_out_code = "DONE", "NOPE", "FULL"
    for status, (_, codes) in EXPECTED_STATUSES.items():
        judge.status = status
        expected = next((getattr(study, f) for f in codes if getattr(study, f)), "")
        assert participation.completion_code(judge, study) == expected
    judge.status = "failed-attention"
    assert participation.completion_code(judge, study) == "DONE"  # no failed-attention code set: the completion code


def _lifecycle_writes(source: str) -> list[str]:
    """Lines of `source` that set a Participant lifecycle field (an attribute or an ORM keyword)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr in LIFECYCLE_FIELDS
                    and "participant" in ast.unparse(target.value).lower()
                ):
                    found.append(f"{node.lineno} {ast.unparse(target)} =")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"update", "create", "get_or_create", "update_or_create"}
            and "Participant" in ast.unparse(node.func.value)
        ):
            for keyword in node.keywords:
                allowed = "participation.arrival_status" in ast.unparse(keyword.value)
                if keyword.arg in LIFECYCLE_FIELDS and not allowed:
                    found.append(f"{node.lineno} {keyword.arg}= in {node.func.attr}()")
    return found


def test_the_write_finder_finds_writes():
    source = (
        "participant.status = 'returned'\n"
        "Participant.objects.filter(pk=1).exclude(x=2).update(prolific_status='APPROVED')\n"
        "Participant.objects.create(study=s, status=participation.arrival_status(study_full=True))\n"
        "study.status = 'live'\n"
    )
    assert _lifecycle_writes(source) == ["1 participant.status =", "2 prolific_status= in update()"]


def test_callers_change_the_lifecycle_only_through_participation():
    root = Path(__file__).resolve().parents[2] / "surveys"
    found = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if relative.startswith(("migrations/", "models/")) or relative == "services/participation.py":
            continue
        found += [f"{relative}:{line}" for line in _lifecycle_writes(path.read_text(encoding="utf-8"))]
    assert found == []


def test_judging_allocation_prolific_and_admin_call_the_table():
    root = Path(__file__).resolve().parents[2] / "surveys"
    for module in ["services/judging.py", "services/allocation.py", "prolific/statuses.py"]:
        assert "apply_event(" in (root / module).read_text(encoding="utf-8"), module
    # The admin's exclusion goes through participation's own function (which applies the event and audits it).
    assert "exclude_by_researcher(participants=" in (root / "admin/participants.py").read_text(encoding="utf-8")
    assert "apply_event(" in (root / "services/participation.py").read_text(encoding="utf-8")
    for module in ["prolific/statuses.py", "prolific/review.py"]:
        assert "participation.record_" in (root / module).read_text(encoding="utf-8"), module
