"""A bad study file never ends in a traceback: every problem is named with its place and nothing is written.

Runs on both databases (PostgreSQL refuses what SQLite stores: NUL bytes, out-of-range smallints).
"""

import copy
import io
import json
import random
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from surveys.models import Answer, Cell, Feature, Question, Study, System, Vignette
from surveys.services.study_files import StudyFileError, import_study, parse_study_file

DEMO = Path(__file__).resolve().parents[2] / "surveys" / "demo" / "demo.study.json"
DEMO_TEXT = DEMO.read_text(encoding="utf-8")
# A place is a path into the file (`answers[3].features[1].weight`, `study.slug`) or a line and column.
PLACE = re.compile(r'^(line \d+ column \d+|study|[\w-]+|"[^"]*")(\.[\w-]+|\.".*?"|\[\d+\])*: \S')


def demo_data() -> dict:
    return json.loads(DEMO_TEXT)


def nothing_written() -> bool:
    tables = [Study, Question, Vignette, System, Answer, Feature, Cell]
    return all(table.objects.count() == 0 for table in tables)


def import_text(text: str) -> list[str]:
    """The errors an import of this text gives ([] when it imported)."""
    try:
        import_study(parse_study_file(text))
    except StudyFileError as exc:
        return exc.errors
    return []


def features_of(data: dict) -> list:
    return data["answers"][0]["features"]


# Issue 10.2: each of these ended in a traceback or was silently accepted.
CASES = [
    (lambda d: d.update(slug="s" * 65), "study.slug: must be at most 64 characters, not 65"),
    (lambda d: d.update(name="n" * 201), "study.name: must be at most 200 characters, not 201"),
    (lambda d: d["vignettes"][0].update(character="c" * 101), "vignettes[0].character: must be at most 100 characters"),
    (lambda d: d["vignettes"][1].update(source="s" * 301), "vignettes[1].source: must be at most 300 characters"),
    (lambda d: d["systems"][0].update(model="m" * 101), "systems[0].model: must be at most 100 characters, not 101"),
    (lambda d: d["systems"][1].update(api_key_env="K" * 65), "systems[1].api_key_env: must be at most 64 characters"),
    (lambda d: d.update(name="Demo\x00"), "study.name: must not hold a NUL character"),
    (lambda d: features_of(d)[0].update(feature="harm\x00"), "answers[0].features[0].feature: must not hold a NUL"),
    (
        lambda d: d["systems"][0].update(parameters={"stop": ["\x00"]}),
        "systems[0].parameters: the text at stop[0] is not",
    ),
    (lambda d: d["design"].update(repetitions=10**30), "design.repetitions: must be a whole number of at most 32767"),
    (lambda d: d["design"].update(repetitions=32768), "design.repetitions: must be a whole number of at most 32767"),
    (lambda d: d["answers"][2].update(sample=-1), "answers[2].sample: must be a whole number of at least 1, not -1"),
    (lambda d: d["vignettes"][0].update(text="A \ud800 B"), "vignettes[0].text: must be Unicode text, not hold a lone"),
    (lambda d: d.update(anwsers=[]), "anwsers: unknown key (did you mean 'answers'?)"),
    (lambda d: d["questions"][0].update(key="<b>x</b>"), "questions[0].key: '<b>x</b>' may hold only letters a–z"),
    (lambda d: d["answers"][0].update(selected="yes"), "answers[0].selected: must be true or false, not 'yes'"),
    (lambda d: features_of(d)[0].update(note="x"), "answers[0].features[0].note: unknown key"),
    (lambda d: d["systems"][0].update(base_url="not a url"), "systems[0].base_url: 'not a url' is not a web address"),
    (lambda d: d.update(systems=[], answers=[]), "study.reference_system: 'lay-human' is not one of the study's"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("break_it", "message"), CASES, ids=[message.split(":")[0] for _, message in CASES])
def test_each_bad_value_is_named_by_its_place_and_nothing_is_written(break_it, message):
    data = demo_data()
    break_it(data)
    errors = import_text(json.dumps(data))
    assert any(error.startswith(message) for error in errors), errors
    assert nothing_written()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "line 1 column 65: nested more than 64 levels deep"),
        ('{"a":' * 100_000 + "1" + "}" * 100_000, "line 1 column 321: nested more than 64 levels deep"),
        (DEMO_TEXT.replace('"slug": "demo",', '"slug": "demo", "slug": "other",'), "study.slug: the key is given more"),
        (
            DEMO_TEXT.replace('"repetitions": 4,', '"repetitions": 4, "repetitions": 5,'),
            "design.repetitions: the key is",
        ),
        (
            DEMO_TEXT.replace('"slug": "demo",', '"slug": "demo", "\\ud800": 1,'),
            '"\\ud800": a key must be Unicode text',
        ),
        ('{"slug": ' + "9" * 5000 + "}", "not valid JSON"),
    ],
    ids=["deep-lists", "deep-objects", "repeated-slug", "repeated-setting", "surrogate-key", "huge-number"],
)
def test_a_file_whose_json_cannot_be_trusted_is_refused_with_its_place(text, message):
    errors = import_text(text)
    assert any(error.startswith(message) for error in errors), errors
    assert nothing_written()


@pytest.mark.django_db
def test_the_command_lists_the_places_and_never_shows_a_traceback(tmp_path):
    data = demo_data()
    data["design"]["repetitions"] = 10**30
    data["questions"][0]["key"] = "<b>x</b>"
    data["vignettes"][0]["text"] = "\ud800"
    path = tmp_path / "bad.study.json"
    path.write_text(json.dumps(data), encoding="utf-8")  # ensure_ascii keeps the lone surrogate as \ud800
    with pytest.raises(CommandError) as caught:
        call_command("import_study", str(path), stdout=io.StringIO())
    lines = str(caught.value).splitlines()
    assert lines[0].endswith("nothing was imported.")
    assert [line.split(":")[0] for line in lines[1:]] == ["design.repetitions", "questions[0].key", "vignettes[0].text"]
    path.write_bytes(b'{"slug": "\xff"}')
    with pytest.raises(CommandError, match="not UTF-8 text"):
        call_command("import_study", str(path), stdout=io.StringIO())
    assert nothing_written()


# The fuzz: seeded, so a failure names a mutation that can be replayed.
NASTY_VALUES = [
    "",
    " ",
    "x" * 65,
    "y" * 301,
    "a\x00b",
    "\ud800",
    "<b>x</b>",
    "yes",
    10**30,
    32768,
    -1,
    0,
    1.5,
    float("nan"),
    True,
    None,
    [],
    {},
    [[[[["deep"]]]]],
    {"unknown": 1},
]


def _paths(value, loc=()):
    yield loc
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield from _paths(child, (*loc, key))


def _set(data, loc, value):
    for part in loc[:-1]:
        data = data[part]
    data[loc[-1]] = value


def _delete(data, loc):
    for part in loc[:-1]:
        data = data[part]
    del data[loc[-1]]


def _mutations(count: int) -> list[tuple[str, str]]:
    """(what was changed, the mutated file's text)."""
    rng = random.Random(20240610)
    by_top_key: dict[str, list[tuple]] = {}
    for loc in _paths(demo_data()):
        if loc:
            by_top_key.setdefault(loc[0], []).append(loc)
    unchanged = json.dumps(demo_data())
    mutations = []
    while len(mutations) < count:  # each top-level key as likely as another, though answers hold most values
        data, loc = demo_data(), rng.choice(by_top_key[rng.choice(sorted(by_top_key))])
        kind = rng.random()
        if kind < 0.75:
            value = rng.choice(NASTY_VALUES)
            _set(data, loc, copy.deepcopy(value))
            what = f"{loc} = {value!r}"[:120]
        elif kind < 0.85:
            _delete(data, loc)
            what = f"del {loc}"
        elif kind < 0.95 and isinstance(loc[-1], str):
            parent = data
            for part in loc[:-1]:
                parent = parent[part]
            parent[loc[-1] + "x"] = parent[loc[-1]]  # a misspelt key beside the real one
            what = f"{loc}x added"
        else:
            text = json.dumps(data)
            cut = rng.randrange(len(text))
            mutations.append((f"cut at {cut}", text[:cut]))
            continue
        if json.dumps(data) != unchanged:  # e.g. `selected = True` where it was true already
            mutations.append((what, json.dumps(data)))
    return mutations


MUTATIONS = _mutations(80)


@pytest.mark.django_db
@pytest.mark.parametrize(("what", "text"), MUTATIONS, ids=[what for what, _ in MUTATIONS])
def test_a_mutated_demo_file_imports_cleanly_or_names_each_problem_and_writes_nothing(what, text):
    errors = import_text(text)  # any exception but StudyFileError fails the test
    if errors:
        assert all(PLACE.match(error) or error.startswith("the file must hold") for error in errors), errors
        assert nothing_written()
    else:
        assert Study.objects.count() == 1


def test_the_fuzz_covers_at_least_fifty_different_mutations_of_the_demo_file():
    assert len({text for _, text in MUTATIONS}) >= 50
    assert all(text != json.dumps(demo_data()) for _, text in MUTATIONS)
