import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from surveys.models import Cell, Judgment, Participant
from surveys.services.study_files import import_study

DEMO = Path(__file__).resolve().parents[2] / "surveys" / "demo" / "demo.study.json"


@pytest.fixture
def demo(db):
    return import_study(json.loads(DEMO.read_text(encoding="utf-8")))


def test_simulated_judges_take_the_survey_through_its_services(demo):
    out = io.StringIO()
    call_command("simulate_judges", "demo", "--judges", "5", "--ability", "gpt-4o=2", stdout=out)
    assert "5 of 5 simulated judges completed 'demo'" in out.getvalue()
    assert Participant.objects.filter(status=Participant.Status.COMPLETED, exclusion="").count() == 5
    # 5 judges × 3 pages × 5 questions, all valid, and the cells count them as completed.
    assert Judgment.objects.valid().count() == 75
    assert sum(Cell.objects.values_list("completed", flat=True)) == 15
    # A strong system wins most of its comparisons.
    gpt = Judgment.objects.filter(winner__system__key="gpt-4o").count()
    against = Judgment.objects.filter(loser__system__key="gpt-4o").count()
    assert gpt > against


def test_until_completed_tops_up_instead_of_adding_more(demo):
    call_command("simulate_judges", "demo", "--until-completed", "4", stdout=io.StringIO())
    call_command("simulate_judges", "demo", "--until-completed", "4", stdout=io.StringIO())
    assert Participant.objects.filter(status=Participant.Status.COMPLETED).count() == 4


def test_bad_arguments_are_clear(demo):
    with pytest.raises(CommandError, match="SYSTEM=NUMBER"):
        call_command("simulate_judges", "demo", "--ability", "gpt-4o")
    with pytest.raises(CommandError, match="No study with slug 'x'"):
        call_command("simulate_judges", "x")
