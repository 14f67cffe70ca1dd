"""Text similarity of answers: TF-IDF cosine, shared by LLM self-similarity and the content checks.

Texts are lower-cased word tokens; idf = ln((1 + n) / (1 + df)) + 1 over the answers being compared;
vectors are L2-normalised tf × idf, so a dot product is the cosine.
"""

import re

import numpy as np

from ..models import Answer

TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def answer_text(answer: Answer) -> str:
    parts = [f"{f.feature}. {f.reason}" for f in answer.features.all()]
    parts += [answer.action, answer.additional_information]
    return "\n".join(p for p in parts if p)


def tfidf_matrix(texts: list[str]) -> np.ndarray:
    """Rows: L2-normalised TF-IDF vectors of the texts."""
    docs = [TOKEN.findall(text.lower()) for text in texts]
    vocabulary = {word: i for i, word in enumerate(sorted({w for doc in docs for w in doc}))}
    counts = np.zeros((len(docs), len(vocabulary)))
    for row, doc in enumerate(docs):
        for word in doc:
            counts[row, vocabulary[word]] += 1
    df = (counts > 0).sum(axis=0)
    idf = np.log((1 + len(docs)) / (1 + df)) + 1
    weighted = counts * idf
    norms = np.linalg.norm(weighted, axis=1, keepdims=True)
    norms[norms == 0] = 1
    return weighted / norms
