"""The power page with an LLM judge: typed agreement, a judge measured on the study, and bad combinations."""

import pytest

from analysis.models import PowerRun
from analysis.tasks import simulate_power
from tests.conftest import make_judged_study
from tests.llm_judging.test_agreement_and_page import add_judge

DESIGN = (
    "systems=7&vignettes=12&repetitions=8&vignettes_per_participant=5&gap=0.4&spacing=even"
    "&alpha=0.05&questions=5&simulations=100&seed=1&target_power=0.8&answer_sd=0.4&order_effect=0"
)


@pytest.fixture
def study(db):
    return make_judged_study(participants=40, seed=5)


def page(client, query: str) -> str:
    """The page once its reported test is simulated: with a broker the page only queues the run, so the
    test runs the task itself (as a worker would) and asks again."""
    response = client.get(f"/dashboard/judged/power/?{DESIGN}&{query}")
    assert response.status_code == 200
    for run in PowerRun.objects.filter(status=PowerRun.Status.SIMULATING):
        simulate_power(run.pk)
        response = client.get(f"/dashboard/judged/power/?{DESIGN}&{query}")
    return response.content.decode()


def judges_needed(html: str) -> tuple[int, int]:
    row = html.split("Human judges needed")[1].split("</tr>")[0]
    alone, beside = (int(cell.split("<")[0]) for cell in row.split("<td>")[1:])
    return alone, beside


def named_power(html: str, key: str) -> str:
    row = html.split(f'<tr id="power-{key}">')[1].split("</tr>")[0]
    return row.split("<strong>")[1].split("</strong>")[0]


def test_without_a_judge_the_page_shows_each_named_test_with_its_own_power_and_no_judge_section(staff_client, study):
    html = page(staff_client, "")
    assert "With an LLM judge" not in html
    assert "Best vs worst (the source study&#x27;s figure)" in html
    assert "Each system vs the reference (the test the dashboard reports)" in html
    assert "what the dashboard reports" not in html
    assert (
        "the headline test (CR2 over vignettes × judge design effect, Satterthwaite df), Holm within a question" in html
    )
    assert "Is the best system different from the worst? One two-sided Wald test at alpha 0.05 ÷ 5 questions." in html
    best, reported = float(named_power(html, "best-vs-worst")), float(named_power(html, "reported"))
    assert best > reported  # one test of the largest gap against several of smaller gaps, Holm-corrected
    assert "Power <strong>" not in html  # no unlabelled power figure
    # Both levers, and what to change, in words: at tau 0.4 more judges cannot reach 80% at 12 vignettes.
    assert 'id="lever-vignettes"' in html
    assert 'id="lever-judges"' in html
    assert "More judges cannot reach 80% at 12 vignettes" in html
    assert "add vignettes" in html


def test_the_judge_section_says_it_is_a_wald_approximation_and_when_the_judge_cannot_help(staff_client, study):
    html = page(staff_client, "judge_agreement=0.95&human_agreement=0.85")  # no cell count: the humans' cells
    alone = html.split("at this design (Wald approximation)</th><td>")[1].split("<")[0]
    # The approximation ignores answer-level variation: its figure is not the reported test's, and says so.
    assert float(alone) > float(named_power(html, "reported"))
    assert "<strong>A Wald approximation:</strong>" in html
    assert "This judge cannot help this design:</strong> the judge covers only the humans&#x27; 252 cells" in html
    assert "are worth\n  <strong>2016</strong>" in html
    assert "The judge saves <strong>0%</strong>" in html


def test_a_better_judge_needs_fewer_human_judges_and_a_judge_at_chance_none_fewer(staff_client, study):
    chance = judges_needed(page(staff_client, "judge_agreement=0.5&human_agreement=0.85&llm_cells=30000"))
    good = judges_needed(page(staff_client, "judge_agreement=0.8&human_agreement=0.85&llm_cells=30000"))
    better_html = page(staff_client, "judge_agreement=0.95&human_agreement=0.85&llm_cells=30000")
    better = judges_needed(better_html)
    assert chance[0] == chance[1] == good[0] == better[0]
    assert chance[1] > good[1] > better[1]
    assert "The judge saves <strong>" in better_html
    assert "ρ = 0.630 is the judge's correlation with one human pick" in better_html


def test_the_study_prefills_its_humans_agreement_and_offers_its_judges(staff_client, study):
    add_judge(study, "first", "other-model", lambda cell, q, first, second: first.pk)
    html = staff_client.get("/dashboard/judged/power/").content.decode()
    assert 'name="human_agreement" value="0.75"' not in html  # measured on the study instead
    assert "measured on this study: each human pick against the majority of the other humans on its cell" in html
    assert '<option value="first">first: agreement 0.50, rho 0.00' in html
    measured = page(staff_client, "judge=first")
    assert "measured on this study" in measured
    assert judges_needed(measured)[0] == judges_needed(measured)[1]


def test_a_judge_and_a_typed_agreement_together_are_refused(staff_client, study):
    add_judge(study, "first", "other-model", lambda cell, q, first, second: first.pk)
    html = page(staff_client, "judge=first&judge_agreement=0.8")
    assert "Pick a measured judge or type an agreement, not both." in html
    assert "With an LLM judge" not in html
    assert "Select a valid choice" in page(staff_client, "judge=nobody")


def test_a_measured_human_agreement_of_one_half_is_explained_as_leaving_no_judge_anything_to_predict():
    from analysis.forms import measured_help

    assert "coin flips" in measured_help(0.5)
    assert "no judge saves anything" in measured_help(0.5)
    assert "coin flips" not in measured_help(0.8)
    assert measured_help(0.8).startswith("Prefilled with 0.80, measured on this study")
