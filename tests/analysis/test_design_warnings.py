"""Design warnings on the readiness line before going live: too few vignettes, too little power, and the fix."""

from django.core.cache import cache

from surveys.services.design_warnings import design_warnings
from tests.conftest import make_study


def test_a_study_with_two_vignettes_is_told_it_can_test_nothing_and_to_add_vignettes(db):
    study = make_study(slug="two", vignettes=2)
    (warning,) = design_warnings(study)
    assert warning.startswith("too few vignettes to test anything: with 2")
    assert warning.endswith("add vignettes")


def test_a_study_with_little_power_for_the_reported_test_is_told_so_with_the_fix(db):
    cache.clear()
    study = make_study(slug="small", vignettes=3, repetitions=1)
    (warning,) = design_warnings(study)
    assert warning.startswith("the reported test has about ")
    assert "power at the planned size" in warning
    assert "add vignettes" in warning


def test_the_readiness_line_shows_the_design_warning_before_going_live(db):
    from django.contrib.admin.sites import site

    from surveys.models import Study

    study = make_study(slug="two", vignettes=2)
    line = site._registry[Study].readiness(study)
    assert "Note: too few vignettes to test anything: with 2" in line
    assert "add vignettes." in line
