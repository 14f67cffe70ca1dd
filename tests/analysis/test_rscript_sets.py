"""The BradleyTerry2 export of a study with vignette sets: the set interaction in BTm and the headline test of each
system's difference between sets, reproduced in real R."""

import csv
import io
import subprocess

import pytest
from numpy.testing import assert_allclose

from analysis.models import AnalysisRun
from analysis.rscript import bradleyterry2_script
from analysis.services import refit_study

from .exported import exported
from .sets_study import make_study_with_sets

FAST = {"bootstrap": 0, "split_halves": 0}


def r_differences(study, run, workdir) -> dict[tuple[str, str], dict[str, float]]:
    (workdir / f"{study.slug}-bradleyterry2.csv").write_text(exported(study=study, name="bradleyterry2.csv"))
    (workdir / f"{study.slug}-bradleyterry2.R").write_text(bradleyterry2_script(study=study, run=run))
    done = subprocess.run(
        ["Rscript", f"{study.slug}-bradleyterry2.R"], cwd=workdir, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    text = (workdir / f"{study.slug}-bradleyterry2-sets.csv").read_text()
    return {
        (row["question"], row["system"]): {key: float(value) for key, value in row.items() if value not in ("NA", "")
                                           and key in ("estimate", "se", "df", "p", "p_holm", "ci_low", "ci_high")}
        for row in csv.DictReader(io.StringIO(text))
    }  # fmt: skip


def test_the_data_file_names_each_judgments_set(db):
    study = make_study_with_sets(participants=20)
    table = list(csv.DictReader(io.StringIO(exported(study=study, name="bradleyterry2.csv"))))
    assert {row["set"] for row in table} == {"published", "novel"}
    assert 'sets <- c("published", "novel")' in bradleyterry2_script(study=study)


@pytest.mark.r
@pytest.mark.parametrize("order_effect", [False, True])
def test_r_reproduces_every_difference_between_sets_with_its_test(db, tmp_path, order_effect):
    study = make_study_with_sets(participants=80)
    run = refit_study(
        study=study, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST | {"order_effect": order_effect}
    )
    r = r_differences(study, run, tmp_path)
    compared = 0
    for question in run.read_results().questions:
        for ours in question.by_set.differences:
            theirs = r[(question.question, ours.system)]
            for key in ("estimate", "se", "df", "p", "p_holm", "ci_low", "ci_high"):
                assert_allclose(theirs[key], getattr(ours, key), rtol=1e-5, atol=1e-6, err_msg=key)
            compared += 1
    assert compared == 5 * 2  # beta and gamma on each of the five questions
