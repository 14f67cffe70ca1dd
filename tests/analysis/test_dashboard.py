"""The researcher dashboard: login, progress, forest plots, comparison, refit button, power page."""

import pytest
from django.contrib.auth import get_user_model

from analysis.models import AnalysisRun
from analysis.services import refit_study
from surveys.models import StudyMembership, System

from ..conftest import QUESTION_KEYS, make_judged_study, make_study
from .conftest import queued

FAST = {"bootstrap": 50, "split_halves": 10}


@pytest.fixture
def fitted(db):
    study = make_judged_study(participants=40, seed=5)
    System.objects.filter(study=study, key="beta").update(label="<b>GPT</b> & $co")
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    return study, run


@pytest.mark.parametrize(
    "path",
    [
        "/dashboard/",
        "/dashboard/judged/",
        "/dashboard/judged/power/",
        "/dashboard/judged/plots/features.svg",
        "/dashboard/judged/exports/judgments.csv",
    ],
)
def test_anonymous_visitors_are_sent_to_the_login_page(client, fitted, path):
    response = client.get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/admin/login/")


def test_a_logged_in_non_staff_user_is_not_let_in(client, fitted):
    client.force_login(get_user_model().objects.create_user("judge", password="pw-12345678"))
    assert client.get("/dashboard/judged/").status_code == 302


def test_the_study_list_links_each_study_with_its_latest_run(staff_client, fitted):
    _study, run = fitted
    page = staff_client.get("/dashboard/").content.decode()
    assert "/dashboard/judged/" in page
    assert str(run.n_judgments) in page


def test_the_study_page_shows_the_questions_in_the_studys_order(staff_client, fitted):
    # PostgreSQL's jsonb stores the results' keys shortest first ("reasons" before "features").
    page = staff_client.get("/dashboard/judged/").content.decode()
    shown = [page.index(f'id="q-{key}-h"') for key in QUESTION_KEYS]
    assert shown == sorted(shown)
    rows = staff_client.get("/dashboard/judged/exports/results.csv").getvalue().decode().splitlines()[1:]
    assert list(dict.fromkeys(row.split(",")[0] for row in rows)) == QUESTION_KEYS


def test_a_negative_reliability_is_explained_in_words(staff_client, fitted):
    _study, run = fitted
    results = run.results
    results["features"]["separation_reliability"] = -1.988
    results["features"]["split_half_reliability"] = -0.5
    AnalysisRun.objects.filter(pk=run.pk).update(results=results)
    page = staff_client.get("/dashboard/judged/").content.decode()
    assert page.count("below 0: the systems differ less than their standard errors") == 1
    assert page.count("below 0: the two halves of the judges rank the systems differently") == 1


def test_the_compare_choices_name_each_study_with_its_slug(staff_client, fitted):
    make_study(slug="pilot")
    page = staff_client.get("/dashboard/judged/").content.decode()
    assert ">Study pilot (pilot)</option>" in page


def test_the_run_line_names_what_started_it_without_nested_brackets(staff_client, fitted):
    _study, run = fitted
    AnalysisRun.objects.filter(pk=run.pk).update(trigger=AnalysisRun.Trigger.ON_DEMAND)
    for url in ["/dashboard/", "/dashboard/judged/"]:
        page = staff_client.get(url).content.decode()
        assert " · On demand (dashboard or API)" in page
        assert "(On demand" not in page


def test_the_study_page_shows_progress_plots_table_and_diagnostics(staff_client, fitted):
    _study, run = fitted
    response = staff_client.get("/dashboard/judged/")
    page = response.content.decode()
    assert response.status_code == 200
    assert f'src="/dashboard/judged/plots/features.svg?run={run.pk}"' in page
    assert "Participants by status" in page
    assert "Separation reliability" in page
    assert "Halo" in page
    assert "First-position pick rate" in page
    assert "Per vignette" in page
    assert "&lt;b&gt;GPT&lt;/b&gt; &amp; $co" in page
    assert "<b>GPT</b>" not in page
    assert "judgments.csv" in page
    assert "bradleyterry2.R" in page


def test_the_forest_plot_svg_names_every_system_and_marks_the_reference(staff_client, fitted):
    response = staff_client.get("/dashboard/judged/plots/features.svg")
    svg = response.content.decode()
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert svg.lstrip().startswith("<?xml")
    assert "<svg" in svg
    for label in ("Alpha", "Gamma", "&lt;b&gt;GPT&lt;/b&gt; &amp; $co", "Log-ability relative to Alpha"):
        assert label in svg


def test_the_forest_plot_is_also_a_downloadable_png(staff_client, fitted):
    response = staff_client.get("/dashboard/judged/plots/features.png?download=1")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response.content[:8] == b"\x89PNG\r\n\x1a\n"
    assert response["Content-Disposition"].startswith('attachment; filename="judged-features-run')


@pytest.mark.parametrize(
    "path",
    ["/dashboard/judged/plots/nope.svg", "/dashboard/judged/plots/features.gif", "/dashboard/x/plots/features.svg"],
)
def test_an_unknown_question_format_or_study_is_404(staff_client, fitted, path):
    assert staff_client.get(path).status_code == 404


def test_a_study_without_a_run_says_so_and_has_no_plot(staff_client, db):
    make_study(slug="fresh")
    page = staff_client.get("/dashboard/fresh/").content.decode()
    assert "No finished analysis yet" in page
    assert staff_client.get("/dashboard/fresh/plots/features.svg").status_code == 404


def test_two_studies_are_shown_side_by_side_per_question(staff_client, fitted):
    _study, run = fitted
    other = make_judged_study(slug="exp2", participants=30, seed=9)
    refit_study(study=other, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    page = staff_client.get("/dashboard/judged/?compare=exp2").content.decode()
    assert f'src="/dashboard/judged/plots/features.svg?run={run.pk}&amp;compare=exp2"' in page
    assert '<option value="exp2" selected>' in page
    assert "<h3>Study exp2</h3>" in page
    svg = staff_client.get(f"/dashboard/judged/plots/features.svg?run={run.pk}&compare=exp2").content.decode()
    for title in ("Features", "Study judged", "Study exp2"):  # the question's label, then each study's panel
        assert title in svg
    assert staff_client.get("/dashboard/judged/plots/features.svg?compare=nope").status_code == 404


def test_a_comparison_study_without_a_run_leaves_the_own_plot_with_a_note(staff_client, fitted):
    _study, run = fitted
    make_study(slug="fresh")
    page = staff_client.get("/dashboard/judged/?compare=fresh").content.decode()
    assert f'src="/dashboard/judged/plots/features.svg?run={run.pk}"' in page
    assert "Study fresh has no finished analysis of this question." in page
    assert staff_client.get("/dashboard/judged/plots/features.svg?compare=fresh").status_code == 404


def test_an_unknown_comparison_study_is_a_form_error_not_a_crash(staff_client, fitted):
    response = staff_client.get("/dashboard/judged/?compare=nope")
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()


def test_the_refit_button_queues_a_refit(staff_client, fitted, memory_broker):
    study, _ = fitted
    response = staff_client.post("/dashboard/judged/refit/")
    assert response.status_code == 302
    assert response["Location"] == "/dashboard/judged/"
    assert [message["args"][0] for message in queued()] == [study.pk]
    assert "was queued" in staff_client.get("/dashboard/judged/").content.decode()
    assert staff_client.get("/dashboard/judged/refit/").status_code == 405


def test_an_old_run_can_be_viewed_by_id_and_a_missing_one_is_404(staff_client, fitted):
    _study, run = fitted
    assert staff_client.get(f"/dashboard/judged/?run={run.pk}").status_code == 200
    assert staff_client.get("/dashboard/judged/?run=99999").status_code == 404
    assert staff_client.get("/dashboard/judged/?run=abc").status_code == 404


def test_the_power_page_is_prefilled_from_the_study_design(staff_client, fitted):
    page = staff_client.get("/dashboard/judged/power/").content.decode()
    assert 'name="systems" value="3"' in page
    assert 'name="vignettes" value="3"' in page
    assert 'name="repetitions" value="8"' in page
    assert 'name="questions" value="5"' in page


def test_the_power_page_simulates_the_design_it_is_given(staff_client, fitted):
    query = (
        "systems=7&vignettes=12&repetitions=8&vignettes_per_participant=5&gap=0.4&spacing=even"
        "&alpha=0.05&questions=5&simulations=400&seed=1&target_power=&answer_sd=0&order_effect=0"
    )
    response = staff_client.get(f"/dashboard/judged/power/?{query}")
    page = response.content.decode()
    assert response.status_code == 200
    best_vs_worst = page.split('<tr id="power-best-vs-worst">')[1].split("</tr>")[0]
    assert "Best vs worst (the source study&#x27;s figure)" in best_vs_worst
    assert "<strong>0.8" in best_vs_worst  # the method's 85.6%, labelled with its test
    assert "Monte Carlo SE" in page


def test_the_power_page_rejects_bad_input_with_a_clear_error(staff_client, fitted):
    response = staff_client.get("/dashboard/judged/power/?systems=1&vignettes=3&repetitions=8&gap=x")
    page = response.content.decode()
    assert response.status_code == 200
    assert "Ensure this value is greater than or equal to 2" in page
    assert "Enter a number" in page
    assert 'value="1"' in page


def test_a_failed_newest_refit_is_shown_with_its_reason(staff_client, db):
    refit_study(study=make_study(slug="noref", reference="nobody"), trigger=AnalysisRun.Trigger.COMMAND)
    page = staff_client.get("/dashboard/noref/").content.decode()
    assert "The newest refit" in page
    assert "failed" in page
    assert "no reference system" in page


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_in_a_real_browser_a_researcher_signs_in_and_sees_the_plots_load(live_server):
    import shutil

    if not shutil.which("chromium"):
        pytest.skip("needs Debian's chromium")
    from playwright.sync_api import sync_playwright

    study = make_judged_study(participants=30, seed=5)
    refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    researcher = get_user_model().objects.create_user("researcher", password="pw-12345678", is_staff=True)
    StudyMembership.objects.create(study=study, user=researcher, role=StudyMembership.Role.OWNER)
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
    args += ["--disable-sync", "--no-first-run", "--disable-quic"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=args)
        try:
            page = browser.new_page()
            page.set_default_timeout(60_000)  # the first dashboard draws every plot; slow on a loaded machine
            page.goto(f"{live_server.url}/dashboard/judged/")
            assert "/admin/login/" in page.url
            page.fill("#id_username", "researcher")
            page.fill("#id_password", "pw-12345678")
            page.click("input[type=submit]")
            page.wait_for_url(f"{live_server.url}/dashboard/judged/")
            page.wait_for_load_state("load")
            widths = page.eval_on_selector_all("img.forest", "imgs => imgs.map(i => i.complete && i.naturalWidth)")
            assert len(widths) == 5
            assert all(width > 0 for width in widths)
            assert page.locator("#q-features table").first.locator("tbody tr").count() == 3
        finally:
            browser.close()


def test_a_plot_of_a_named_run_may_be_cached_by_the_browser_but_the_latest_may_not(staff_client, fitted):
    _study, run = fitted
    named = staff_client.get(f"/dashboard/judged/plots/features.svg?run={run.pk}")
    assert "max-age=86400" in named["Cache-Control"]
    assert "private" in named["Cache-Control"]
    assert "max-age" not in staff_client.get("/dashboard/judged/plots/features.svg").get("Cache-Control", "")


def test_the_two_times_say_what_each_measures(staff_client, db):
    from surveys.models import Assignment, Participant

    study = make_judged_study(participants=6, seed=3)
    page = staff_client.get(f"/dashboard/{study.slug}/").content.decode()
    assert "minutes on the comparison pages (each page from being shown to its answers being sent, added up)" in page
    assert "minutes from arriving to finishing (consent, questions about them and the attention check included)" in page
    assert "longer than the whole visit" not in page

    # Pages answered without being loaded are timed from their reservation: the page says why the sum is longer.
    for participant in Participant.objects.filter(study=study):
        visit = (participant.finished_at - participant.started_at).total_seconds()
        Participant.objects.filter(pk=participant.pk).update(seconds_total=2 * visit)
        Assignment.objects.filter(participant=participant).update(shown_at=None)
    page = staff_client.get(f"/dashboard/{study.slug}/").content.decode()
    assert "is longer than the whole visit: pages whose answers were sent without the page being loaded" in page
