"""Reading the dashboard: questions under their short labels, the other fits with SE, interval and a sentence
on how to read them, and a refit button that says what happened."""

import json
import re
from pathlib import Path

import pytest
from django.conf import settings

from analysis.models import AnalysisRun
from analysis.services import refit_study
from surveys.models import Answer, Question
from surveys.models.freeze import freeze_lifted
from surveys.services.study_files import export_study, import_study

from ..conftest import make_judged_study
from .conftest import queued

FAST = {"bootstrap": 50, "split_halves": 10}


@pytest.fixture
def fitted(db):
    study = make_judged_study(participants=40, seed=5)
    with freeze_lifted():  # the study is live: an operator's data fix
        Question.objects.filter(study=study, key="weighting").update(label="Weighing the features")
        # Answers of different lengths, not in step with the systems: the style-controlled fit has a length to remove.
        lengths = [("beta", "v1", 150), ("beta", "v2", 40), ("gamma", "v2", 90), ("alpha", "v3", 60)]
        for system, vignette, words in lengths:
            Answer.objects.filter(system__study=study, system__key=system, vignette__key=vignette).update(
                action="word " * words
            )
    run = refit_study(study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)
    return study, run


def test_headings_halo_and_alt_texts_use_the_questions_short_labels_not_their_keys(staff_client, fitted):
    page = staff_client.get("/dashboard/judged/").content.decode()
    assert '<h2 id="q-additional_info-h">Additional information</h2>' in page  # the method's label for its key
    assert '<h2 id="q-weighting-h">Weighing the features</h2>' in page  # the study's own label
    assert '<th scope="col">Additional information</th>' in page  # the halo table
    assert '<th scope="row">Weighing the features</th>' in page
    assert 'alt="Forest plot of Weighing the features for Study judged.' in page
    assert ">additional_info<" not in page
    assert "Reference: <strong>Alpha</strong>" in page  # the reference system by its label too


def test_the_plot_of_a_question_with_its_own_label_is_titled_with_it(staff_client, fitted):
    svg = staff_client.get("/dashboard/judged/plots/weighting.svg").content.decode()
    assert "Weighing the features" in svg
    assert "Study judged" not in svg


def test_a_question_key_outside_the_method_reads_as_words(staff_client, fitted):
    study, run = fitted
    with freeze_lifted():
        Question.objects.filter(study=study, key="reasons").update(key="moral_reasons_given")
    results = dict(run.results)
    results["moral_reasons_given"] = results.pop("reasons") | {"question": "moral_reasons_given"}
    AnalysisRun.objects.filter(pk=run.pk).update(results=results)
    page = staff_client.get("/dashboard/judged/").content.decode()
    assert '<h2 id="q-moral_reasons_given-h">Moral reasons given</h2>' in page


def test_the_style_controlled_column_shows_each_estimates_se_and_interval(staff_client, fitted):
    _study, run = fitted
    styled = run.read_results().question("features").alternative_fits["style_controlled"].fit
    beta = next(item for item in styled.items if item.item == "beta")
    page = staff_client.get("/dashboard/judged/").content.decode()
    assert (
        f'{beta.estimate:.3f}<span class="fit-detail">SE {beta.se:.3f} · [{beta.ci_low:.2f}, {beta.ci_high:.2f}]</span>'
    ) in page


def test_the_style_controlled_fit_is_explained_with_the_length_effect_it_removed(staff_client, fitted):
    _study, run = fitted
    length = run.read_results().question("features").alternative_fits["style_controlled"].fit.covariate_effects[0]
    page = staff_client.get("/dashboard/judged/").content.decode()
    assert (
        "<li>Style-controlled: Each system&#x27;s ability after removing the advantage that longer answers get." in page
    )
    assert "A large change from the plain estimate means judges rewarded length." in page
    assert (
        f"Here an answer 100 words longer than the other changes its log-odds of winning by {length.estimate:.3f} "
        f"(SE {length.se:.3f}, 95% CI [{length.ci_low:.2f}, {length.ci_high:.2f}])."
    ) in page
    assert "<li>Bias-reduced (Firth): The same model with Firth&#x27;s bias reduction" in page


def test_without_length_differences_the_style_sentence_says_so(staff_client, fitted):
    _study, run = fitted
    results = dict(run.results)
    results["features"]["alternative_fits"]["style_controlled"] = {
        "label": "Style-controlled",
        "fit": None,
        "problems": ["No length differences to control for."],
    }
    AnalysisRun.objects.filter(pk=run.pk).update(results=results)
    page = staff_client.get("/dashboard/judged/").content.decode()
    assert "its interval is wide. No length differences to control for.</li>" in page


def test_the_interval_sentences_are_a_list_one_per_kind(staff_client, fitted):
    page = staff_client.get("/dashboard/judged/").content.decode()
    assert "<li>Bootstrap CI: Judges: would another sample of judges, rating these same answers" in page
    assert "<li>Judge × answer robust CI: Judges and answers: would other judges" in page
    assert "<li>Judge × answer bootstrap CI: Judges and answers, by resampling" in page


def test_each_question_leads_with_its_headline_table_and_keeps_the_other_intervals_and_fits_in_details(
    staff_client, fitted
):
    page = staff_client.get("/dashboard/judged/").content.decode()
    features = page.split('id="q-features"')[1].split('<section class="card question"')[0]
    headline, others = features.split('<details class="other-intervals">')
    lead = re.search(r'<table class="dash-table numbers headline-table">\s*<thead>(.*?)</thead>', headline).group(1)
    assert re.findall(r'<th scope="col">([^<]*)</th>', lead) == [
        "System",
        "Estimate",
        "SE",
        "p",
        "",
        "Holm p",
        "95% CI",
        "W–L",
    ]
    assert "<summary>Other intervals and fits</summary>" in others
    for heading in ("Wald CI (conditional on these answers)", "Bootstrap CI", "Style-controlled"):
        assert f'<th scope="col">{heading}</th>' in others
        assert heading not in lead
    assert "Which interval answers which question" in others


def test_a_label_given_in_the_study_file_is_shown_and_exported(staff_client, db):
    demo = json.loads((Path(settings.BASE_DIR) / "surveys/demo/demo.study.json").read_text())
    demo["slug"], demo["status"] = "labelled", "draft"
    demo["questions"][0]["label"] = "Moral features"
    study = import_study(demo)
    assert study.questions.get(key="features").short_label == "Moral features"
    exported = export_study(study)["questions"]
    assert exported[0]["label"] == "Moral features"
    assert "label" not in exported[1]  # written only when set: files without labels stay as they were


def test_refit_now_without_a_broker_says_refitted_with_the_new_runs_time_not_queued(staff_client, fitted, no_broker):
    page = staff_client.post("/dashboard/judged/refit/", follow=True).content.decode()
    run = AnalysisRun.objects.latest("pk")
    assert run.status == AnalysisRun.Status.DONE
    assert f"Refitted: run {run.pk} finished at {run.finished_at:%Y-%m-%d %H:%M} UTC on {run.n_judgments} valid" in page
    assert "queued" not in page
    assert f"Run {run.pk}: " in page  # and the page shows that run


def test_refit_now_with_a_broker_says_queued_and_not_refitted(staff_client, fitted, memory_broker):
    page = staff_client.post("/dashboard/judged/refit/", follow=True).content.decode()
    assert "was queued; the page shows it once it has finished." in page
    assert "Refitted" not in page
    assert len(queued()) == 1


def test_a_refit_that_ran_here_and_failed_says_failed(staff_client, db, no_broker):
    make_judged_study(slug="noref", participants=5)
    from surveys.models import Study

    Study.objects.filter(slug="noref").update(reference_system=None)
    response = staff_client.post("/dashboard/noref/refit/", follow=True)
    page = response.content.decode()
    assert "The refit ran here (no task queue is configured) and failed:" in page
    assert '<li class="error">' in page
    assert "Refitted" not in page
