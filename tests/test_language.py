"""A question in another language is read in English (assistant/answer/language.py)."""

from __future__ import annotations

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from assistant.answer.language import language_of, read_in_english


@pytest.mark.parametrize(("question", "language"), [
    ("Qu'est-ce que GlowQ ?", "fr"),
    ("Comment fonctionne la quantification dans GlowQ ?", "fr"),
    ("¿Hay algún artículo sobre privacidad diferencial?", "es"),
    ("Welche Datensätze nutzt SSD-GS?", "de"),
    ("Come funziona SAFER?", "it"),
    ("O que é o DrPose?", "pt"),
    ("Как работает SAFER?", "ru"),
    ("DrPose 是做什么的", "zh"),
    ("GlowQ はどのように量子化しますか？", "ja"),
    # English, however it is written: the detector's doubt about these stays under the bar
    ("What reward does DrPose maximize?", None),
    ("tl;dr of SSD-GS?", None),
    ("LoRA rank per layer", None),
    ("what's GlowQ's actual perplexity number on WikiText-2 with Llama-2-7B?", None),
    ("what kind of estimator do the RaLoRA authors propose to mesure gradient intrinsic "
     "dimensionality?", None),
    ("knowlege distilation from several teacher llms, which paper?", None),
    # names alone are no language ("DrPose15K" alone reads as Armenian)
    ("DrPose15K", None),
    ("GlowQ?", None),
    ("", None),
    # one word, or two of a Latin script the detector is not sure of, say no language
    ("ja", None),
    ("how so?", None),
    ("latent diffusion", None),
])
def test_the_language_of_a_question(question: str, language: str | None) -> None:
    assert language_of(question) == language


def test_a_question_in_another_language_is_translated_and_the_user_told() -> None:
    llm = FakeListChatModel(responses=['English: "What is GlowQ?"\nextra line'])
    english, note = read_in_english("Qu'est-ce que GlowQ ?", llm)
    assert english == "What is GlowQ?"
    assert note is not None and '(fr)' in note and '"What is GlowQ?"' in note


def test_an_english_question_is_not_sent_to_the_model() -> None:
    llm = FakeListChatModel(responses=[])  # any call would fail: no response left
    assert read_in_english("What is GlowQ?", llm) == ("What is GlowQ?", None)


def test_no_translation_leaves_the_question_as_it_was() -> None:
    llm = FakeListChatModel(responses=["  "])
    assert read_in_english("Qu'est-ce que GlowQ ?", llm) == ("Qu'est-ce que GlowQ ?", None)


def test_a_translation_that_loses_a_name_is_not_used() -> None:
    """The names (GlowQ, SSD-GS, 23,404) are the same in every language: a translation
    without one of them is no translation of the question."""
    llm = FakeListChatModel(responses=["What datasets does it use?"])
    question = "Welche Datensätze nutzt SSD-GS?"
    assert read_in_english(question, llm) == (question, None)
    llm = FakeListChatModel(responses=["What datasets does SSD-GS use?"])
    assert read_in_english(question, llm)[0] == "What datasets does SSD-GS use?"
