"""A study's snapshot: what its participants see, written once, read through Django's cache (models/snapshots.py).

Written on going live (`write_live_snapshot`, after lifecycle's checks), replaced only for an operator's data
fix (`replace_snapshot`, recorded in the audit trail). Read in pieces: the head (language, questions,
vignette order) and each vignette and answer, each under the snapshot's id in the `snapshots` cache (Redis
when REDIS_URL is set, else this process's memory). A snapshot never changes, so an entry never goes stale;
a replaced one is simply no longer asked for, and every process reads the new id with the study's row.
"""

from dataclasses import dataclass
from typing import Any

from django.core.cache import caches
from django.db import transaction

from ..models import Answer, AuditEvent, Feature, Question, Study, StudySnapshot, Vignette
from .audit import record_event

CACHE = "snapshots"
SECONDS = 7 * 24 * 3600  # entries never go stale; the limit only lets a long-closed study's fall out


def content_for(study: Study, answers: list[Answer] | None = None) -> dict[str, Any]:
    """The study's questions, vignettes and `answers` (default: the selected ones) with features, as JSON."""
    if answers is None:
        answers = list(Answer.objects.for_study(study).selected())
    features: dict[int, list[dict]] = {}
    for feature in Feature.objects.filter(answer__in=[a.pk for a in answers]).order_by("answer_id", "position"):
        features.setdefault(feature.answer_id, []).append(
            {
                "id": feature.pk,
                "position": feature.position,
                "feature": feature.feature,
                "weight": feature.weight,
                "reason": feature.reason,
            }
        )
    return {
        "language": study.language,
        "questions": [
            {
                "id": q.pk,
                "key": q.key,
                "label": q.label,
                "text": q.text,
                "translations": q.translations,
                "position": q.position,
            }
            for q in study.questions.order_by("position", "id")
        ],
        "vignettes": [
            {
                "id": v.pk,
                "key": v.key,
                "character": v.character,
                "text": v.text,
                "translations": v.translations,
                "position": v.position,
                "set": v.set,
                "source": v.source,
            }
            for v in study.vignettes.order_by("position", "id")
        ],
        "answers": [
            {
                "id": a.pk,
                "system_id": a.system_id,
                "vignette_id": a.vignette_id,
                "sample": a.sample,
                "action": a.action,
                "additional_information": a.additional_information,
                "translations": a.translations,
                "features": features.get(a.pk, []),
            }
            for a in sorted(answers, key=lambda a: a.pk)
        ],
    }


def write_snapshot(*, study: Study, kind: str = StudySnapshot.Kind.LIVE, by=None, answers=None, replaces=None):
    """A new snapshot of the study as it is now (the caller checked it: lifecycle.missing_for_live)."""
    person = by if getattr(by, "pk", None) else None
    return StudySnapshot.objects.create(
        study=study, kind=kind, content=content_for(study, answers), created_by=person, replaces=replaces
    )


def write_live_snapshot(*, study: Study, by=None) -> StudySnapshot:
    """On going live: the snapshot judges and writers will be shown, set as the study's."""
    snapshot = write_snapshot(study=study, by=by)
    study.snapshot = snapshot
    study.save(update_fields=["snapshot"])
    return snapshot


class NothingToReplace(Exception):
    pass


@transaction.atomic
def replace_snapshot(*, study: Study, by=None, reason: str = "") -> StudySnapshot:
    """A data fix: the live study's snapshot rewritten from its rows as they are now, recorded in the audit trail.

    Every process shows the new one from its next request (the study's row names it); nothing restarts.
    """
    study = Study.objects.select_for_update().get(pk=study.pk)
    if study.status == Study.Status.DRAFT:
        raise NothingToReplace(f"Study '{study.slug}' is a draft: it is shown from its rows until it goes live.")
    old = study.snapshot
    new = write_snapshot(study=study, by=by, replaces=old)
    study.snapshot = new
    study.save(update_fields=["snapshot"])
    caches[CACHE].delete(language_key(study.slug))
    record_event(
        action=AuditEvent.Action.SNAPSHOT_REPLACED,
        user=by,
        study=study,
        old=str(old.pk) if old else None,
        new=str(new.pk),
        reason=reason,
        changed=changes(old.content if old else {}, new.content),
    )
    return new


def changes(old: dict, new: dict) -> list[str]:
    """Which questions, vignettes and answers differ between two snapshots' contents, by kind and id."""
    changed = []
    for part in ("questions", "vignettes", "answers"):
        before = {item["id"]: item for item in old.get(part, [])}
        after = {item["id"]: item for item in new.get(part, [])}
        changed += [
            f"{part[:-1]} {pk}" for pk in sorted(before.keys() | after.keys()) if before.get(pk) != after.get(pk)
        ]
    if old.get("language") != new.get("language"):
        changed.append("language")
    return changed


# Reading -------------------------------------------------------------------------------------------------


def language_key(slug: str) -> str:
    return f"study-language:{slug}"


def _key(snapshot_id, piece: str) -> str:
    return f"snapshot:{snapshot_id}:{piece}"


def _pieces(content: dict) -> dict[str, Any]:
    head = {
        "language": content["language"],
        "questions": content["questions"],
        "vignette_ranks": {v["id"]: rank for rank, v in enumerate(content["vignettes"], start=1)},
    }
    pieces: dict[str, Any] = {"head": head}
    pieces |= {f"vignette:{v['id']}": v for v in content["vignettes"]}
    pieces |= {f"answer:{a['id']}": a for a in content["answers"]}
    return pieces


def read_pieces(snapshot_id, pieces: list[str]) -> dict[str, Any]:
    """The pieces ("head", "vignette:ID", "answer:ID") of a snapshot: one cache round trip, the row on a miss."""
    cache = caches[CACHE]
    keys = {piece: _key(snapshot_id, piece) for piece in pieces}
    found = cache.get_many(list(keys.values()))
    if len(found) == len(keys):
        return {piece: found[key] for piece, key in keys.items()}
    content = StudySnapshot.objects.values_list("content", flat=True).get(pk=snapshot_id)
    every = _pieces(content)
    cache.set_many({_key(snapshot_id, piece): value for piece, value in every.items()}, SECONDS)
    return {piece: every[piece] for piece in pieces}


@dataclass
class Shown:
    """A snapshot's head as the pages use it."""

    language: str
    questions: list[Question]
    vignette_ranks: dict[int, int]  # 1 for the study's first vignette (by position), 2 for the second, …


def as_question(item: dict, study_id: int) -> Question:
    return Question(
        study_id=study_id, **{name: item[name] for name in ("id", "key", "label", "text", "translations", "position")}
    )


def as_vignette(item: dict, study_id: int) -> Vignette:
    fields = ("id", "key", "character", "text", "translations", "position", "set", "source")
    return Vignette(study_id=study_id, **{name: item[name] for name in fields})


def as_answer(item: dict) -> Answer:
    fields = ("id", "system_id", "vignette_id", "sample", "action", "additional_information", "translations")
    answer = Answer(selected=True, **{name: item[name] for name in fields})
    answer.shown_features = [Feature(answer_id=item["id"], **feature) for feature in item["features"]]
    return answer


def shown_head(snapshot_id, study_id: int) -> Shown:
    head = read_pieces(snapshot_id, ["head"])["head"]
    ranks = {int(pk): rank for pk, rank in head["vignette_ranks"].items()}  # JSON keys may come back as text
    return Shown(head["language"], [as_question(q, study_id) for q in head["questions"]], ranks)
