"""Token-aware, sentence-respecting chunks with overlap, sized for the embedding model."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from assistant.corpus import Paper

# Full stops that do not end a sentence.
_ABBREVIATIONS = re.compile(r"\b(?:e\.g|i\.e|et al|etc|vs|cf|Fig|Eq|Sec|approx|resp|Dr|No)\.$")
_BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


@dataclass(frozen=True)
class Chunk:
    """A passage of one paper, as stored in the index."""

    paper_id: str
    index: int
    text: str
    tokens: int

    @property
    def id(self) -> str:
        return f"{self.paper_id}:{self.index}"


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``; abbreviations such as "e.g." and "et al." do not end one."""
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        candidate = text[start : match.start()].strip()
        if _ABBREVIATIONS.search(candidate):
            continue
        if candidate:
            sentences.append(candidate)
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def _split_long(sentence: str, limit: int, count: Callable[[str], int]) -> list[str]:
    """A sentence longer than ``limit`` tokens, cut between words into pieces that fit."""
    pieces: list[str] = []
    words: list[str] = []
    for word in sentence.split():
        if words and count(" ".join([*words, word])) > limit:
            pieces.append(" ".join(words))
            words = []
        words.append(word)
    if words:
        pieces.append(" ".join(words))
    return pieces


def chunk_text(
    text: str, count: Callable[[str], int], max_tokens: int, overlap_tokens: int
) -> list[str]:
    """Pack whole sentences into chunks of at most ``max_tokens``.

    Each chunk after the first starts with the last sentences of the previous one, up to
    ``overlap_tokens``, so a fact split across a boundary is still whole in one chunk.
    """
    sentences = [
        piece
        for sentence in split_sentences(text)
        for piece in (
            _split_long(sentence, max_tokens, count) if count(sentence) > max_tokens else [sentence]
        )
    ]
    sizes = [count(s) for s in sentences]
    chunks: list[str] = []
    start = 0
    while start < len(sentences):
        end, total = start, 0
        while end < len(sentences) and (end == start or total + sizes[end] + 1 <= max_tokens):
            total += sizes[end] + (1 if end > start else 0)
            end += 1
        chunks.append(" ".join(sentences[start:end]))
        if end >= len(sentences):
            break
        # Step back over trailing sentences that fit in the overlap, but always move on.
        back, carried = end, 0
        while back - 1 > start and carried + sizes[back - 1] <= overlap_tokens:
            back -= 1
            carried += sizes[back]
        start = back
    return chunks


def chunk_paper(
    paper: Paper, count: Callable[[str], int], max_tokens: int, overlap_tokens: int
) -> list[Chunk]:
    """The chunks of one paper's abstract."""
    return [
        Chunk(paper.id, i, text, count(text))
        for i, text in enumerate(chunk_text(paper.abstract, count, max_tokens, overlap_tokens))
    ]
