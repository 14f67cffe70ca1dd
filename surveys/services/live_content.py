"""What a live study shows its judges, read once per web process instead of on every request.

Going live freezes a study's language, questions, vignettes and answers (freezing.py), so a copy read
after that never goes stale: entries are keyed by the study and the moment it went live, and a draft
(which may still change) is never cached. A live study that is deleted and its slug reused is the one
change a long-running process could miss, so the slug -> language entries also expire after a while.
"""

import threading
import time
from dataclasses import dataclass, field

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from ..models import Answer, Feature, Question, Study, Vignette

LANGUAGE_SECONDS = 300  # how long a slug's language is trusted (see the module's note)
MAX_STUDIES = 64  # live studies kept per process; more evict the oldest

_lock = threading.Lock()
_languages: dict[str, tuple[str, float]] = {}
_contents: dict[tuple, "LiveContent"] = {}


@dataclass
class LiveContent:
    questions: list[Question]
    vignette_ranks: dict[int, int]  # 1 for the study's first vignette (by position), 2 for the second, …
    vignettes: dict[int, Vignette]  # by id: what a judging page shows of its vignette
    answers: dict[int, Answer] = field(default_factory=dict)  # filled as pages are shown, with shown_features


@receiver([post_save, post_delete], sender=Study, dispatch_uid="live-content-forget")
def forget(sender, instance: Study, **kwargs) -> None:
    """A study saved or deleted in this process is read afresh (other processes: see the module's note)."""
    with _lock:
        _languages.pop(instance.slug, None)
        for key in [key for key in _contents if key[0] == instance.pk]:
            _contents.pop(key, None)


def study_language(slug: str) -> str | None:
    """The language of the study with this slug (None when there is none)."""
    cached = _languages.get(slug)
    if cached and cached[1] > time.monotonic():
        return cached[0]
    row = Study.objects.filter(slug=slug).values_list("language", "status").first()
    if row is None:
        return None
    language, status = row
    if status != Study.Status.DRAFT:
        with _lock:
            _languages[slug] = (language, time.monotonic() + LANGUAGE_SECONDS)
    return language


def content_of(study: Study) -> LiveContent:
    """The study's questions and vignette order, from this process's copy once the study is live."""
    if study.status == Study.Status.DRAFT:
        return _read(study)
    key = (study.pk, study.went_live_at)
    content = _contents.get(key)
    if content is None:
        content = _read(study)
        with _lock:
            if len(_contents) >= MAX_STUDIES:
                _contents.pop(next(iter(_contents)))
            content = _contents.setdefault(key, content)
    return content


def _read(study: Study) -> LiveContent:
    vignettes = list(study.vignettes.order_by("position", "id"))
    return LiveContent(
        questions=list(study.questions.order_by("position", "id")),
        vignette_ranks={vignette.pk: rank for rank, vignette in enumerate(vignettes, start=1)},
        vignettes={vignette.pk: vignette for vignette in vignettes},
    )


def answers_of(study: Study, answer_ids: list[int]) -> dict[int, Answer]:
    """The answers with their features in order (`shown_features`); one query for those not yet read."""
    content = content_of(study)
    missing = [answer_id for answer_id in answer_ids if answer_id not in content.answers]
    if missing:
        # Explicit orderings: the models' default orderings would join up to the study.
        read: dict[int, Answer] = {}
        for feature in (
            Feature.objects.filter(answer_id__in=missing).select_related("answer").order_by("answer_id", "position")
        ):
            answer = read.setdefault(feature.answer_id, feature.answer)
            answer.shown_features = [*getattr(answer, "shown_features", []), feature]
        if study.status == Study.Status.DRAFT:
            return read
        content.answers.update(read)
    return {answer_id: content.answers[answer_id] for answer_id in answer_ids}
