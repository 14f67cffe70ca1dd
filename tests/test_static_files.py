"""The static storages name each file's URL once per process, and still name what the manifest says."""

import json

import pytest

from moraljudge.static_files import HashedStaticFiles, StaticFiles


def test_pages_link_the_hashed_file_the_manifest_names(tmp_path, settings):
    settings.DEBUG = False
    manifest = {"paths": {"surveys/site.css": "surveys/site.0123abcd.css"}, "version": "1.1", "hash": "f00"}
    (tmp_path / "staticfiles.json").write_text(json.dumps(manifest))
    storage = HashedStaticFiles(location=tmp_path, base_url="/static/")
    assert storage.url("surveys/site.css") == "/static/surveys/site.0123abcd.css"
    assert storage.url("surveys/site.css") == "/static/surveys/site.0123abcd.css"  # remembered, the same
    for _ in range(2):  # a file missing from the manifest is an error every time, never remembered as a URL
        with pytest.raises(ValueError, match="Missing staticfiles manifest entry"):
            storage.url("surveys/missing.css")


def test_development_links_the_files_as_they_are_named(tmp_path):
    storage = StaticFiles(location=tmp_path, base_url="/static/")
    assert storage.url("surveys/site.css") == "/static/surveys/site.css"
    assert storage.url("surveys/a file.css") == "/static/surveys/a%20file.css"
