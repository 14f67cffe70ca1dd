"""What a study's pages show: from its snapshot once it has one (services/snapshots.py), else from its rows.

A live study is shown from its snapshot, read through Django's cache under the snapshot's id: every process
shows the same, and a replaced snapshot (a data fix) is shown from the next request on. A draft (which may
still change) is read from its rows every time: only a draft has no snapshot (the database refuses a study
past draft without one, and migration 0034 gave one to those that went live before snapshots existed). The study's language is cached by slug for a few minutes
(the one thing read before the study is), in the same cache; replacing a snapshot forgets it.
"""

from django.core.cache import caches
from django.db.models import Prefetch

from ..models import Answer, Feature, Study, Vignette
from .snapshots import CACHE, Shown, as_answer, as_vignette, language_key, read_pieces, shown_head

LANGUAGE_SECONDS = 300  # how long a slug's language is trusted (a live study deleted and its slug reused)


def study_language(slug: str) -> str | None:
    """The language of the study with this slug (None when there is none)."""
    cache = caches[CACHE]
    language = cache.get(language_key(slug))
    if language is not None:
        return language
    row = Study.objects.filter(slug=slug).values_list("language", "status").first()
    if row is None:
        return None
    language, status = row
    if status != Study.Status.DRAFT:
        cache.set(language_key(slug), language, LANGUAGE_SECONDS)
    return language


def content_of(study: Study) -> Shown:
    """The study's language, questions and vignette order as its participants are shown them."""
    shown = getattr(study, "_shown", None)  # read once per request: the study's row is the request's own
    if shown is None or shown[0] != study.snapshot_id:
        shown = (study.snapshot_id, shown_head(study.snapshot_id, study.pk) if study.snapshot_id else _read(study))
        study._shown = shown  # type: ignore[attr-defined]
    return shown[1]


def _read(study: Study) -> Shown:
    vignettes = list(study.vignettes.order_by("position", "id").values_list("id", flat=True))
    return Shown(
        language=study.language,
        questions=list(study.questions.order_by("position", "id")),
        vignette_ranks={pk: rank for rank, pk in enumerate(vignettes, start=1)},
    )


def page_of(study: Study, vignette_id: int, answer_ids: list[int]) -> tuple[Vignette, dict[int, Answer]]:
    """A judging page's vignette and answers (`shown_features` in order): one cache round trip once live."""
    if study.snapshot_id:
        pieces = read_pieces(study.snapshot_id, [f"vignette:{vignette_id}", *(f"answer:{pk}" for pk in answer_ids)])
        answers = {pk: as_answer(pieces[f"answer:{pk}"]) for pk in answer_ids}
        return as_vignette(pieces[f"vignette:{vignette_id}"], study.pk), answers
    # Explicit orderings: the models' default orderings would join up to the study.
    features = Prefetch("features", queryset=Feature.objects.order_by("position"), to_attr="shown_features")
    answers = {a.pk: a for a in Answer.objects.filter(pk__in=answer_ids).order_by().prefetch_related(features)}
    return Vignette.objects.get(pk=vignette_id), answers
