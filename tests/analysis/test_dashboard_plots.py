"""Forest plots say what each mark is: a legend naming every mark drawn, the question's label as the title."""

import pytest

from analysis import plots
from analysis.models import AnalysisRun
from analysis.services import refit_study

from ..conftest import make_judged_study

FAST = {"bootstrap": 50, "split_halves": 10}


@pytest.fixture
def fitted(db):
    study = make_judged_study(participants=40, seed=5)
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    return study, run


def legend_texts(figure) -> list[str]:
    return [text.get_text() for legend in figure.legends for text in legend.get_texts()]


def test_the_forest_plot_has_a_legend_for_the_estimate_every_interval_drawn_and_the_reference(fitted):
    _study, run = fitted
    fitted_results = run.read_results()
    figure = plots.forest_plot(
        systems=fitted_results.systems, result=fitted_results.question("features"), title="Features"
    )
    # The main bar is the headline test's interval (3 vignettes: Satterthwaite df under 2); the Wald interval is
    # a thin bar of its own.
    assert legend_texts(figure) == [
        "Estimate and 95% Judge × vignette CR2 CI, t with 1.92–1.94 df (Satterthwaite, per system)",
        "95% Wald CI (conditional on these answers)",
        "95% Bootstrap CI (judges resampled)",
        "95% Judge × answer robust CI (judges and vignettes, robust)",
        "95% Judge-robust CI (judges, robust)",
        "95% Judge × answer bootstrap CI (judges and vignettes resampled)",
        "Reference system (0 by definition)",
        "0: as good as the reference",
    ]
    # Every extra interval is drawn as a line of its own colour: one per system and kind but the reference's.
    colours = {plots.INTERVAL_STYLES[kind]["color"] for kind in plots.INTERVAL_STYLES}
    drawn = [line for line in figure.axes[0].get_lines() if line.get_color() in colours]
    assert len(drawn) == 4 * 2
    assert figure.axes[0].get_title(loc="left") == "Features"


def test_a_run_without_extra_intervals_has_no_legend_entry_for_them(fitted):
    _study, run = fitted
    fitted_results = run.read_results()
    question = fitted_results.question("features")
    bare = type(question)(**{**question.__dict__, "intervals": {}, "headline": None})  # as stored before schema 3
    figure = plots.forest_plot(systems=fitted_results.systems, result=bare, title="Features")
    assert legend_texts(figure) == [
        "Estimate and 95% Wald CI (each judgment independent)",
        "Reference system (0 by definition)",
        "0: as good as the reference",
    ]


def test_the_svg_shows_the_legend_and_the_questions_label_not_its_key(staff_client, fitted):
    svg = staff_client.get("/dashboard/judged/plots/additional_info.svg").content.decode()
    assert "Additional information" in svg
    assert "additional_info" not in svg
    assert "Study judged" not in svg  # the page says which study; the plot names the question
    for text in ("95% Bootstrap CI (judges resampled)", "Reference system (0 by definition)"):
        assert text in svg


def test_side_by_side_plots_name_the_question_once_each_study_per_panel_and_share_one_legend(staff_client, fitted):
    _study, run = fitted
    other = make_judged_study(slug="exp2", participants=30, seed=9)
    refit_study(study=other, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    svg = staff_client.get(f"/dashboard/judged/plots/features.svg?run={run.pk}&compare=exp2").content.decode()
    assert svg.count("Features") == 1  # the question, once, above both panels
    assert "Study judged" in svg
    assert "Study exp2" in svg
    assert svg.count("0: as good as the reference") == 1


def test_the_dashboard_describes_each_plots_marks_in_its_alt_text(staff_client, fitted):
    page = staff_client.get("/dashboard/judged/").content.decode()
    assert (
        'alt="Forest plot of Additional information for Study judged. Blue dot and bar: estimate and 95% Judge × '
        "vignette CR2 CI, t with 1.93–1.94 df (Satterthwaite, per system); thin brown bar: 95% Wald CI (conditional on "
        "these answers); thin grey bar: "
        "95% Bootstrap CI (judges resampled);"
    ) in page
    assert "black diamond: reference system (0 by definition); dotted line: 0: as good as the reference." in page


def test_an_llm_judges_ppi_plot_names_its_own_interval_and_no_bootstrap():
    from analysis.results import SystemAtFit
    from llm_judging.services.report import typed

    systems = [SystemAtFit("alpha", "Alpha", "human"), SystemAtFit("beta", "Beta", "llm")]
    result = typed(
        "features",
        {
            "reference": "alpha",
            "items": [
                {"item": "alpha", "estimate": 0.0, "ci_low": None, "ci_high": None},
                {"item": "beta", "estimate": 0.4, "ci_low": 0.1, "ci_high": 0.7},
            ],
        },
    )
    figure = plots.forest_plot(
        systems=systems, result=result, title="Features: oracle", interval_label="95% PPI CI (calibrated by the humans)"
    )
    assert legend_texts(figure) == [
        "Estimate and 95% PPI CI (calibrated by the humans)",
        "Reference system (0 by definition)",
        "0: as good as the reference",
    ]


def test_with_the_bias_reduced_setting_the_legend_says_the_dots_are_firths_estimates(staff_client, db):
    study = make_judged_study(slug="sep", abilities={"alpha": 0.0, "beta": 0.5, "gamma": -40.0}, participants=40)
    study.bias_reduced = True
    study.save()
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    fitted_results = run.read_results()
    figure = plots.forest_plot(
        systems=fitted_results.systems, result=fitted_results.question("features"), title="Features"
    )
    assert legend_texts(figure)[0].startswith("Bias-reduced (Firth) estimate and 95% Judge")  # the headline's
    page = staff_client.get("/dashboard/sep/").content.decode()
    assert "Blue dot and bar: bias-reduced (Firth) estimate and 95% Judge" in page
    assert "<li>Maximum likelihood: The ordinary Bradley–Terry fit, beside the bias-reduced estimates" in page
