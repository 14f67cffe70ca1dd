"""Agreement, biases and estimates from stored judge calls, and the researcher page, exports, plots and admin."""

from collections import Counter

import pytest

from llm_judging.models import JudgeCall, JudgeModel
from llm_judging.services.agreement import agreement_rows, cohen_kappa
from llm_judging.services.estimates import estimate_rows
from surveys.models import Judgment
from tests.conftest import QUESTION_KEYS

pytestmark = pytest.mark.django_db


def human_majorities(study, question):
    votes = Counter()
    judgments = Judgment.objects.valid().filter(question__key=question, question__study=study)
    for judgment in judgments.select_related("assignment__cell"):
        cell = judgment.assignment.cell
        votes[(cell.pk, judgment.winner_id == cell.answer_a_id)] += 1
    cells = {cell for cell, _ in votes}
    return {c: votes[(c, True)] > votes[(c, False)] for c in cells if votes[(c, True)] != votes[(c, False)]}


def add_judge(study, key, model, choose):
    """Store finished calls for every cell in both orders; choose(cell, question, first, second) -> answer id."""
    judge = JudgeModel.objects.create(study=study, key=key, provider="openai", model=model)
    for cell in study.cells.select_related("answer_a__system", "answer_b__system"):
        for order, (first, second) in (("ab", (cell.answer_a, cell.answer_b)), ("ba", (cell.answer_b, cell.answer_a))):
            picks = {q: "A" if choose(cell, q, first, second) == first.pk else "B" for q in QUESTION_KEYS}
            JudgeCall.objects.create(judge=judge, cell=cell, order=order, first_answer=first, second_answer=second,
                                     status="done", picks=picks)  # fmt: skip
    return judge


@pytest.fixture
def judged(judged_study):
    majority = {q: human_majorities(judged_study, q) for q in QUESTION_KEYS}

    def with_humans(cell, q, first, second):
        a_won = majority[q].get(cell.pk, True)
        return cell.answer_a_id if a_won else cell.answer_b_id

    def selfish(cell, q, first, second):
        for answer in (first, second):
            if answer.system.key == "beta":
                return answer.pk
        return with_humans(cell, q, first, second)

    judged_study.systems.filter(key="beta").update(kind="llm", provider="openai", model="gpt-4o-own")
    add_judge(judged_study, "oracle", "some-model", with_humans)
    add_judge(judged_study, "first", "other-model", lambda cell, q, first, second: first.pk)
    add_judge(judged_study, "selfish", "gpt-4o-own", selfish)
    return judged_study


def test_cohen_kappa_is_one_for_full_agreement_and_zero_for_chance():
    assert cohen_kappa([True, False, True], [True, False, True]) == 1
    assert cohen_kappa([True, True, False, False], [True, False, True, False]) == 0


def test_agreement_position_and_self_preference_come_out_as_built(judged):
    rows = {(r.question, r.judge): r for r in agreement_rows(study=judged)}
    assert len(rows) == 5 * 3
    oracle, first, selfish = (rows[("features", j)] for j in ("oracle", "first", "selfish"))
    assert oracle.agreement == 1
    assert oracle.position_consistency == 1
    assert oracle.first_position_rate == 0.5
    assert first.first_position_rate == 1
    assert first.position_consistency == 0
    assert first.agreement == 0.5
    assert first.kappa == pytest.approx(0)
    assert oracle.self_preference is None
    assert oracle.self_preference_cases == 0
    if selfish.self_preference_cases:  # cells where humans picked beta's opponent
        assert selfish.self_preference == 1
        assert selfish.against_humans_elsewhere == 0
    assert 0.5 <= oracle.human_agreement <= 1
    assert oracle.human_cells > 0


def test_estimates_give_llm_only_ppi_and_human_only_rows_per_system(judged):
    rows = [r for r in estimate_rows(study=judged) if r.question == "features" and r.judge == "oracle"]
    assert {r.system for r in rows} == {"beta", "gamma"}  # the reference (alpha) is fixed at 0
    for r in rows:
        assert r.ppi_low < r.ppi_estimate < r.ppi_high
        assert r.human_low < r.human_estimate < r.human_high
        assert r.n_human > 0
        # The judge judged exactly the humans' cells: nothing beyond them to learn, PPI is the humans' estimate.
        assert r.extra_cells == 0
        assert r.lam == 0
        assert (r.ppi_low, r.ppi_high) == pytest.approx((r.human_low, r.human_high))
        assert r.worth_human_judgments == pytest.approx(r.n_human)
    # A judge that always picks the first-shown answer, in both orders, sees every system as equal.
    position_only = [r for r in estimate_rows(study=judged) if r.question == "features" and r.judge == "first"]
    assert all(abs(r.llm_estimate) < 1e-6 and r.llm_low < 0 < r.llm_high for r in position_only)


def test_the_page_exports_and_plots_are_for_staff(judged, staff_client):
    from django.test import Client

    url = f"/dashboard/{judged.slug}/llm-judges/"
    assert Client().get(url).status_code == 302
    assert Client().get(url + "exports/llm-agreement.csv").status_code == 302
    page = staff_client.get(url)
    assert page.status_code == 200
    assert b"Agreement and biases" in page.content
    assert b"selfish" in page.content
    text = page.content.decode()
    assert '<h2 id="plots-additional_info">Additional information</h2>' in text  # labels, not keys, in headings
    assert "<tr><td>Additional information</td>" in text
    assert "plots/llm/oracle/additional_info.svg" in text  # the plots' addresses keep the keys
    assert (
        "<strong>oracle</strong> cannot help on Additional information: it judged only cells the humans judged" in text
    )
    csv = staff_client.get(url + "exports/llm-agreement.csv")
    assert csv.streaming  # a download as it is written, not built whole first
    assert streamed(csv).splitlines()[0].startswith("question,judge,picks,cells,agreement,kappa")
    assert streamed(staff_client.get(url + "exports/llm-estimates.csv")).count("\n") == 1 + 5 * 3 * 2
    assert staff_client.get(url + "exports/other.csv").status_code == 404
    for kind in ("llm", "ppi"):
        svg = staff_client.get(url + f"plots/{kind}/oracle/features.svg")
        assert svg.status_code == 200
        assert svg["content-type"] == "image/svg+xml"
    assert staff_client.get(url + "plots/llm/nobody/features.svg").status_code == 404
    assert f"/dashboard/{judged.slug}/llm-judges/".encode() in staff_client.get(f"/dashboard/{judged.slug}/").content


def test_llm_judgments_never_enter_the_human_analysis_input(judged):
    from analysis.services.reading import read_study_data

    with_llm = read_study_data(study=judged)
    JudgeCall.objects.all().delete()
    without = read_study_data(study=judged)
    assert with_llm.data_hash == without.data_hash
    assert with_llm.judgment_count == without.judgment_count == Judgment.objects.valid().count()


def test_the_admin_starts_a_run_and_lists_its_calls(judged_study, researcher, client, monkeypatch):
    from tests.fakes.llm_servers import FakeLLMServer

    with FakeLLMServer() as fake:
        judge = JudgeModel.objects.create(study=judged_study, key="gpt-4o", provider="openai", model="gpt-4o",
                                          base_url=fake.url, api_key_env="FAKE_LLM_API_KEY")  # fmt: skip
        assert client.get("/admin/llm_judging/judgingrun/add/").status_code == 200
        form = {"study": judged_study.pk, "judges": [judge.pk], "samples": 1, "orders": "one"}
        page = client.post("/admin/llm_judging/judgingrun/add/", form).content.decode()
        assert "<td>gpt-4o (gpt-4o)</td><td>9</td><td>9 calls; no earlier call to estimate from: its price is" in page
        assert not JudgeCall.objects.exists()  # nothing asked before the confirmation
        response = client.post("/admin/llm_judging/judgingrun/add/", {**form, "confirmed": "yes"})
        assert response.status_code == 302
        assert JudgeCall.objects.filter(judge=judge).count() == 9
        run_page = client.get(response["location"])
        assert b"Every call of this run" in run_page.content
        assert client.get("/admin/llm_judging/judgecall/").status_code == 200
        call = JudgeCall.objects.first()
        assert client.get(f"/admin/llm_judging/judgecall/{call.pk}/change/").status_code == 200


def streamed(response) -> str:
    return b"".join(response.streaming_content).decode()
