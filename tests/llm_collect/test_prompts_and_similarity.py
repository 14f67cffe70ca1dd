"""The default instrument, a study's own prompts, and self-similarity."""

import numpy as np
import pytest

from llm_collect.prompts import default_system_prompt, default_user_prompt, render_prompts
from llm_collect.similarity import (
    embedding_matrix,
    embeddings_available,
    mean_pairwise_cosine,
    self_similarity,
    tfidf_matrix,
)
from surveys.services.answer_records import create_answer
from surveys.services.answer_shape import FeatureIn

from .conftest import make_llm_study


@pytest.mark.django_db
def test_the_default_instrument_fills_in_the_character_and_the_vignette():
    study = make_llm_study(url="http://127.0.0.1:9", vignettes=1)
    vignette = study.vignettes.get()
    system_prompt, user_prompt = render_prompts(study=study, vignette=vignette)
    assert system_prompt == default_system_prompt()
    assert "advising Sam1 on what he ought to do next" in user_prompt
    assert "Story 1." in user_prompt
    assert '"features"' in user_prompt
    assert "{character_name}" not in user_prompt
    assert default_user_prompt().count("{character_name}") == 2


@pytest.mark.django_db
def test_a_study_prompt_replaces_the_default_and_keeps_other_braces():
    study = make_llm_study(url="http://127.0.0.1:9", vignettes=1)
    study.system_prompt = "Be brief."
    study.user_prompt = 'What should {character_name} do? Reply as {"features": []}.'
    _, user_prompt = render_prompts(study=study, vignette=study.vignettes.get())
    assert user_prompt == 'Story:\nStory 1.\n\nWhat should Sam1 do? Reply as {"features": []}.'


def test_tfidf_cosine_is_one_for_identical_texts_and_lower_for_different_ones():
    m = tfidf_matrix(["tell the truth now", "tell the truth now", "keep the money quietly"])
    assert mean_pairwise_cosine(m[[0, 1]]) == pytest.approx(1.0)
    assert mean_pairwise_cosine(m[[0, 2]]) < 0.5
    np.testing.assert_allclose(np.linalg.norm(m, axis=1), 1.0)


@pytest.mark.django_db
def test_self_similarity_averages_each_systems_samples_per_vignette():
    study = make_llm_study(url="http://127.0.0.1:9", vignettes=2)
    m0 = study.systems.get(key="m0")
    for vignette in study.vignettes.all():
        for sample, action in enumerate(["tell the truth", "tell the truth"], start=1):
            create_answer(
                system=m0,
                vignette=vignette,
                features=[FeatureIn(feature="honesty", weight=100)],
                action=action,
                sample=sample,
            )
    values = self_similarity(study=study)
    assert values == {"m0": pytest.approx(1.0)}


@pytest.mark.skipif(not embeddings_available(), reason="needs requirements-embeddings.txt")
def test_sentence_embeddings_find_paraphrases_closer_than_unrelated_text():
    m = embedding_matrix(
        ["She should tell her friend the truth.", "Telling the friend the truth is right.", "Bake the bread at 200 C."]
    )
    assert mean_pairwise_cosine(m[[0, 1]]) > mean_pairwise_cosine(m[[0, 2]]) + 0.2
