"""The answers CSV import is capped before any work, like study files (issue 35): a cell, the columns, the rows."""

import pytest

from surveys.models import Answer
from surveys.services.answer_files import MAX_CELL_CHARACTERS, MAX_COLUMNS, AnswerFileError, import_answers
from tests.conftest import make_study

pytestmark = pytest.mark.django_db
HEADER = "system,vignette,feature_1,weight_1,reason_1\n"


def refused(text: str) -> str:
    study = make_study(slug="caps")
    before = Answer.objects.count()
    with pytest.raises(AnswerFileError) as caught:
        import_answers(study=study, text=text)
    assert Answer.objects.count() == before
    return "\n".join(caught.value.errors)


def test_a_cell_over_128_kb_is_a_clear_error_not_a_crash():
    said = refused(HEADER + f'alpha,v1,honesty,100,"{"x" * 200_000}"\n')
    assert said == f"row 2: a cell holds more than {MAX_CELL_CHARACTERS:,} characters"


def test_a_200000_column_header_is_refused_in_one_short_message():
    said = refused(",".join(f"c{n}" for n in range(200_000)) + "\nalpha\n")
    assert said == f"row 1: 200,000 columns, more than the {MAX_COLUMNS} an answers file has"


def test_more_rows_than_a_study_file_holds_are_refused_before_any_answer_is_written(settings):
    settings.STUDY_FILE_MAX_ITEMS = 3
    said = refused(HEADER + "".join(f"alpha,v{n},honesty,100,because\n" for n in range(1, 6)))
    assert "more than 3 rows: an answers file holds at most 3 answers (STUDY_FILE_MAX_ITEMS" in said
