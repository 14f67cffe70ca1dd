"""A demo-shaped study whose vignettes come in two sets (`published`, `novel`), three of each, for the tests of
results by set."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from surveys.services.study_files import import_study

DEMO = Path(__file__).resolve().parents[2] / "surveys" / "demo" / "demo.study.json"


def study_file_with_sets(*, slug: str = "sets", per_set: int = 3) -> dict:
    """The demo study with `per_set` published and `per_set` novel vignettes (copies of the demo's, answers too)."""
    demo = json.loads(DEMO.read_text(encoding="utf-8"))
    made = copy.deepcopy(demo) | {"slug": slug, "name": f"Study {slug}", "vignettes": [], "answers": []}
    for number in range(2 * per_set):
        original = demo["vignettes"][number % len(demo["vignettes"])]
        key = f"v{number + 1}"
        made["vignettes"].append(original | {"key": key, "set": "published" if number < per_set else "novel"})
        made["answers"] += [
            answer | {"vignette": key} for answer in demo["answers"] if answer["vignette"] == original["key"]
        ]
    return made


def import_study_with_sets(**kwargs):
    return import_study(study_file_with_sets(**kwargs))


def make_study_with_sets(
    *, slug: str = "sets", per_set: int = 4, participants: int = 120, seed: int = 3, pid_prefix: str = "P", **kwargs
):
    """A live study (alpha the reference, beta, gamma) with `per_set` published and `per_set` novel vignettes,
    judged from `set_abilities` (default: gamma much worse on the novel set, beta the same in both)."""
    from surveys.models import Vignette
    from surveys.services.lifecycle import go_live

    from ..conftest import fabricate_judgments, make_study

    abilities = kwargs.pop("set_abilities", None) or {
        "published": {"alpha": 0.0, "beta": 0.5, "gamma": 0.4},
        "novel": {"alpha": 0.0, "beta": 0.5, "gamma": -0.8},
    }
    study = make_study(slug=slug, vignettes=2 * per_set, vignettes_per_participant=4)
    for vignette in Vignette.objects.filter(study=study):
        vignette.set = "published" if vignette.position <= per_set else "novel"
        vignette.save(update_fields=["set"])
    study = go_live(study=study)
    fabricate_judgments(
        study, abilities["published"], participants=participants, seed=seed, set_abilities=abilities,
        pid_prefix=pid_prefix,
    )  # fmt: skip
    return study
