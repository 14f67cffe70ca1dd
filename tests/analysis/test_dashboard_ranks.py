"""Rank claims on the dashboard, in the API and in results.csv: "best with 95% confidence" only for a system whose
rank set is the single rank 1; otherwise the rank set; none (with the reason) where there is no test."""

import csv
import io

import pytest

from analysis.models import AnalysisRun
from analysis.services import refit_study

from ..conftest import make_judged_study

FAST = {"bootstrap": 0, "split_halves": 0}


def refit(**study):
    made = make_judged_study(**study)
    return made, refit_study(study=made, trigger=AnalysisRun.Trigger.COMMAND, parameters=FAST)


def ranks_section(page: str, question: str) -> str:
    start = page.index(f'id="ranks-{question}"')
    return page[start : page.index("</section>", start)]


@pytest.fixture
def separated(db):
    """Abilities far apart: beta is best, and the data show it."""
    return refit(slug="apart", abilities={"alpha": 0.0, "beta": 2.5, "gamma": -2.5}, participants=60, vignettes=6)


@pytest.fixture
def close(db):
    """Abilities within a few hundredths: no system can be called best."""
    return refit(slug="close", abilities={"alpha": 0.0, "beta": 0.05, "gamma": -0.05}, participants=30, vignettes=4)


def test_the_page_says_best_with_95_percent_confidence_for_a_clear_winner(staff_client, separated):
    study, _run = separated
    section = ranks_section(staff_client.get(f"/dashboard/{study.slug}/").content.decode(), "features")
    assert "Beta is best with 95% confidence (its rank set is rank 1 alone)." in section
    assert "Best with 95% confidence" in section  # beta's row
    assert "Worst with 95% confidence" in section  # gamma's row
    assert "Simultaneous 95% band" in section


def test_close_systems_get_rank_sets_and_no_best_claim(staff_client, close):
    study, _run = close
    section = ranks_section(staff_client.get(f"/dashboard/{study.slug}/").content.decode(), "features")
    assert "No system is best with 95% confidence" in section
    assert "Rank 1–3" in section
    assert "rank 1 alone" not in section
    assert "Best with 95% confidence" not in section


def test_the_api_and_results_csv_carry_the_same_claims(staff_client, separated, close):
    for (study, _run), best in ((separated, "beta"), (close, "")):
        ranks = staff_client.get(f"/api/studies/{study.slug}/results/").json()["results"]["features"]["ranks"]
        assert ranks["best"] == best
        claims = {item["item"]: item["claim"] for item in ranks["items"]}
        text = staff_client.get(f"/dashboard/{study.slug}/exports/results.csv").getvalue().decode()
        rows = [row for row in csv.DictReader(io.StringIO(text)) if row["question"] == "features"]
        assert {row["system"]: row["rank_claim"] for row in rows} == claims
        said_best = [item for item, claim in claims.items() if claim == "best with 95% confidence"]
        assert said_best == ([best] if best else [])
        for item in ranks["items"]:
            assert item["rank_low"] <= item["rank"] <= item["rank_high"]
            if item["item"] != "alpha":  # the reference's band is [0, 0]
                assert item["band_low"] < item["band_high"]


def test_below_three_vignettes_there_is_no_band_and_no_rank_claim_and_the_page_says_why(staff_client, db):
    study, _run = refit(slug="two", abilities={"alpha": 0.0, "beta": 3.0, "gamma": -3.0}, participants=40,
                        vignettes=2, vignettes_per_participant=2)  # fmt: skip
    section = ranks_section(staff_client.get(f"/dashboard/{study.slug}/").content.decode(), "features")
    assert "No test: only 2 vignettes." in section
    assert "no simultaneous band and no claim about ranks: no system is claimed best" in section
    assert "rank-table" not in section
    ranks = staff_client.get(f"/api/studies/{study.slug}/results/").json()["results"]["features"]["ranks"]
    assert ranks["best"] == ""
    assert ranks["why_not"].startswith("No test: only 2 vignettes.")
    assert all(item["band_low"] is None and item["rank_low"] is None for item in ranks["items"])
    text = staff_client.get(f"/dashboard/{study.slug}/exports/results.csv").getvalue().decode()
    row = next(csv.DictReader(io.StringIO(text)))
    assert row["rank_low"] == row["band_low"] == ""
    assert row["rank_claim"].startswith("no rank claim: no test: only 2 vignettes.")
