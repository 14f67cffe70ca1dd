"""Study files have a size and a count limit, and every number is range-checked before the database sees it.

Runs on both databases: PostgreSQL refuses what SQLite would store (1e300 in a numeric(6,2), 40,000 in a smallint).
"""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from surveys.services.study_files import StudyFileError, import_study, read_study_upload
from tests.surveys.test_study_file_errors import demo_data, import_text, nothing_written

pytestmark = pytest.mark.django_db


def with_rate(rate) -> str:
    data = demo_data()
    data.setdefault("prolific", {})["hourly_rate"] = rate
    return json.dumps(data)


@pytest.mark.parametrize("rate", [1e300, 10000, 9999.996])
def test_an_hourly_rate_beyond_the_column_is_named_and_nothing_is_written(rate):
    errors = import_text(with_rate(rate))
    assert any(error.startswith("prolific.hourly_rate: must be at most 9999.99, not") for error in errors), errors
    assert nothing_written()


def test_the_largest_hourly_rate_the_column_holds_is_imported():
    assert import_text(with_rate(9999.99)) == []


def test_100000_questions_are_refused_by_the_count_limit_with_their_place():
    data = demo_data()
    data["questions"] = [{"key": f"q{i}", "text": "?"} for i in range(100_000)]  # 2.7 MB: under the size limit

    errors = import_text(json.dumps(data))

    assert errors == ["questions: 100,000 items, more than the 1,000 a study file may hold (STUDY_FILE_MAX_ITEMS)"]
    assert nothing_written()


def test_the_count_limit_is_a_setting_and_counts_any_list_or_object(settings):
    settings.STUDY_FILE_MAX_ITEMS = 20
    data = demo_data()
    data["systems"][0]["parameters"] = {f"p{i}": i for i in range(21)}

    errors = import_text(json.dumps(data))

    assert errors == ["systems[0].parameters: 21 keys, more than the 20 a study file may hold (STUDY_FILE_MAX_ITEMS)"]
    assert nothing_written()


def test_an_over_size_file_is_refused_before_it_is_decoded_or_parsed(settings):
    settings.STUDY_FILE_MAX_BYTES = 2048
    raw = json.dumps(demo_data()).encode()
    assert len(raw) > 2048
    with pytest.raises(StudyFileError) as caught:
        read_study_upload(raw + b"\xff{{{{")  # neither UTF-8 nor JSON: never looked at
    assert caught.value.errors == [
        f"the file is {len(raw) + 5:,} bytes, more than the 2,048 a study file may have (STUDY_FILE_MAX_BYTES)"
    ]
    assert nothing_written()


def test_the_command_refuses_an_over_size_file_with_the_setting_named(settings, tmp_path):
    settings.STUDY_FILE_MAX_BYTES = 4096
    path = tmp_path / "big.study.json"
    path.write_bytes(b" " * 5000 + json.dumps(demo_data()).encode())
    with pytest.raises(CommandError, match="STUDY_FILE_MAX_BYTES"):
        call_command("import_study", str(path), stdout=io.StringIO())
    assert nothing_written()


def test_a_file_within_the_limits_still_imports(tmp_path):
    path = tmp_path / "demo.study.json"
    path.write_text(json.dumps(demo_data()), encoding="utf-8")
    out = io.StringIO()
    call_command("import_study", str(path), stdout=out)
    assert "Imported study" in out.getvalue()


def test_import_study_called_directly_applies_the_limits_too(settings):
    settings.STUDY_FILE_MAX_ITEMS = 2
    with pytest.raises(StudyFileError, match="STUDY_FILE_MAX_ITEMS"):
        import_study(demo_data())
    assert nothing_written()
