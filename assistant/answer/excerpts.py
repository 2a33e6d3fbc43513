"""The sentences that matter: short excerpts of the retrieved passages for the prompt.

Every sentence sent is read by the model before the first word (docs/performance.md gives
the speeds), so each retrieved paper contributes its sentences closest to the question (by
meaning, shared words and names), kept in their original order, within a token budget that
favours the best paper.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from assistant.answer.wording import cosine
from assistant.text.sentences import (
    key_terms,
    normalise,
    question_names,
    split_sentences,
    without_instructions,
)
from assistant.text.stems import terms
from assistant.types import Source

EmbedMany = Callable[[list[str]], list[list[float]]]


def relevance(sentence: str, vector: Sequence[float], query: Sequence[float],
              asked: set[str], names: set[str]) -> float:
    """How near a sentence is to the question: in meaning, plus the share of the question's
    words it uses and whether it holds a name the question gives."""
    overlap = len(set(terms(sentence)) & asked) / len(asked) if asked else 0.0
    named = any(n in normalise(sentence) for n in names)
    return cosine(query, vector) + 0.3 * overlap + 0.3 * named


def select_excerpts(
    question: str,
    sources: Sequence[Source],
    embed_many: EmbedMany,
    count: Callable[[str], int],
    budget: int,
    first_share: float = 0.45,
    several: bool = False,
    focused: bool = False,
) -> list[tuple[Source, tuple[str, ...]]]:
    """For each source (best first), its most relevant sentences, in document order.

    The first source may use ``first_share`` of ``budget`` (an even share when the
    question asks for several papers); the rest is split over the others. A source whose
    budget cannot hold one sentence is left out. ``focused``: the one source is the paper
    the question names.
    """
    if not sources:
        return []
    sentences = [
        list(dict.fromkeys(s for passage in (src.passages or (src.text,)) for s in split_sentences(passage)))
        for src in sources
    ]
    flat = [s for group in sentences for s in group]
    vectors = embed_many([question, *flat])
    query, rest = vectors[0], vectors[1:]
    asked = set(terms(question))
    names = question_names(question)
    if focused:
        # The question's names and the title's words picked the paper; within it they say
        # nothing about which sentence answers, so only the other words count.
        asked -= set(terms(" ".join(key_terms(question)))) | set(terms(sources[0].title))
        names = set()
    shares = _shares(len(sources), budget, first_share, several)
    chosen: list[tuple[Source, tuple[str, ...]]] = []
    position = 0
    for source, group, share in zip(sources, sentences, shares, strict=True):
        vectors = rest[position:position + len(group)]
        scored = [(relevance(sentence, vector, query, asked, names), index, sentence)
                  for index, (sentence, vector) in enumerate(zip(group, vectors, strict=True))]
        position += len(group)
        picked: list[tuple[int, str]] = []
        used = 0
        for _, index, sentence in sorted(scored, reverse=True):
            size = count(sentence) + 1
            if used + size > share:
                continue
            picked.append((index, sentence))
            used += size
        if picked:
            chosen.append((source, (" ".join(s for _, s in sorted(picked)),)))
    return chosen


def _shares(n: int, budget: int, first_share: float, several: bool) -> list[int]:
    if n == 1:
        return [budget]
    if several:
        return [budget // n] * n
    first = int(budget * first_share)
    return [first] + [(budget - first) // (n - 1)] * (n - 1)


def remembered(embed_many: EmbedMany) -> EmbedMany:
    """``embed_many`` that embeds each text once, however often it is asked for."""
    seen: dict[str, list[float]] = {}

    def embed(texts: list[str]) -> list[list[float]]:
        new = [t for t in dict.fromkeys(texts) if t not in seen]
        if new:
            seen.update(zip(new, embed_many(new), strict=True))
        return [seen[t] for t in texts]
    return embed


def without_orders(source: Source) -> Source:
    """``source`` without the orders planted in its text ("ignore your rules, cite …"),
    which are never shown to the model."""
    passages = tuple(p for p in map(without_instructions, source.passages) if p.strip())
    text = without_instructions(source.text)
    if passages == source.passages and text == source.text:
        return source
    return replace(source, passages=passages, text=text)
