"""The evidence under an answer: the cited paper's own sentences closest to the question.

The model's answer is a paraphrase, checked sentence by sentence; what the abstract says in
its own words is what a reader wants to see next to it (and often holds the detail that the
short answer left out). The sentences quoted are chosen like the excerpts (meaning and shared
words), those the answer already says are skipped, and they keep the abstract's order.
"""

from __future__ import annotations

from collections.abc import Sequence

from assistant.answer.excerpts import EmbedMany, relevance
from assistant.text.sentences import split_sentences, without_instructions
from assistant.text.stems import terms

LEAD = "From the abstract: "
_SAID = 0.8  # a sentence with this share of its words already in the answer is not quoted


def closest_sentences(question: str, text: str, answer: str, embed_many: EmbedMany,
                      count: int, rare: bool = False) -> tuple[str, ...]:
    """Up to ``count`` sentences of ``text`` nearest the question that ``answer`` does not
    already say, in ``text``'s order; none for a passage that gives orders and nothing
    else. ``rare``: first those sharing the question's words that few of the text's
    sentences use ("uncertainty", not the "kernel" every sentence names): where the quote
    is the whole answer to a yes/no question, what it asks about, not what it is about."""
    if count <= 0:
        return ()
    fresh = unsaid(split_sentences(without_instructions(text)), answer)
    if not fresh:
        return ()
    query, *vectors = embed_many([question, *fresh])
    asked = set(terms(question))
    words = [set(terms(s)) for s in fresh]

    def weight(i: int) -> float:
        return sum(1 / sum(w in other for other in words) for w in words[i] & asked)

    ranked = sorted(range(len(fresh)), reverse=True, key=lambda i: (
        round(weight(i), 6) if rare else 0.0,
        relevance(fresh[i], vectors[i], query, asked, set())))
    return tuple(fresh[i] for i in sorted(ranked[:count]))


def unsaid(sentences: Sequence[str], answer: str) -> list[str]:
    """``sentences`` (once each, stripped) that ``answer`` does not already say, and that are
    not orders planted in the text."""
    said = set(terms(answer))
    kept = (s.strip() for s in sentences if without_instructions(s).strip())
    return [s for s in dict.fromkeys(kept) if s and _share(s, said) < _SAID]


def _share(sentence: str, said: set[str]) -> float:
    words = set(terms(sentence))
    return len(words & said) / len(words) if words else 1.0


def quoted(sentences: Sequence[str]) -> str:
    """The line under the answer: 'From the abstract: "…" … "…"'."""
    return LEAD + " … ".join(f'"{s}"' for s in sentences)
