"""Token-aware, sentence-respecting chunks with overlap, sized for the embedding model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from assistant.ingest.corpus import Paper
from assistant.text.sentences import split_sentences

# A text's last chunk may hold max_tokens // ENDING_SHARE more tokens (at the default 160, 20):
# fewer chunks, while a chunk with its title still fits MiniLM's 256 word pieces.
ENDING_SHARE = 8


@dataclass(frozen=True)
class Chunk:
    """A passage of one paper, as stored in the index."""

    paper_id: str
    index: int
    text: str
    tokens: int
    overlap: int = 0  # characters at the start of ``text`` that repeat the chunk before it

    @property
    def id(self) -> str:
        return f"{self.paper_id}:{self.index}"


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


def ending_tokens(max_tokens: int) -> int:
    """How far a text's last chunk may stretch past ``max_tokens`` to take in its ending."""
    return max_tokens // ENDING_SHARE


def chunking_label(max_tokens: int, overlap_tokens: int) -> str:
    """What each chunk records of how it was cut; a different label re-chunks the paper."""
    return f"{max_tokens}/{overlap_tokens}+{ending_tokens(max_tokens)}"


def chunk_spans(
    text: str, count: Callable[[str], int], max_tokens: int, overlap_tokens: int
) -> list[tuple[str, int]]:
    """Pack whole sentences into chunks of at most ``max_tokens`` (the last: a little more):
    each chunk's text and how many of its first characters repeat the chunk before.

    Each chunk after the first starts with the last sentences of the previous one, up to
    ``overlap_tokens``, so a fact split across a boundary is still whole in one chunk.
    A text's last few sentences, up to :func:`ending_tokens`, join the chunk before them
    rather than make a chunk of their own, which would repeat the overlap and the title for
    a sentence or two.
    """
    sentences = [
        piece
        for sentence in split_sentences(text)
        for piece in (
            _split_long(sentence, max_tokens, count) if count(sentence) > max_tokens else [sentence]
        )
    ]
    sizes = [count(s) for s in sentences]
    after = list(accumulate(reversed(sizes), initial=0))[::-1]  # sentences' tokens from i on
    stretch = max_tokens + ending_tokens(max_tokens)
    chunks: list[tuple[str, int]] = []
    start = previous_end = 0
    while start < len(sentences):
        end, total = start, 0
        while end < len(sentences) and (end == start or total + sizes[end] + 1 <= max_tokens):
            total += sizes[end] + (1 if end > start else 0)
            end += 1
        ending = (end < len(sentences) and after[start] <= stretch
                  and count(" ".join(sentences[start:])) <= stretch)
        if start < previous_end and end <= previous_end and not ending:
            # The next sentence does not fit beside the carried ones, nor does the ending take
            # them in: the chunk would only repeat them.
            start = previous_end
            continue
        # The sentences carried over from the chunk before, and the space after them.
        repeated = len(" ".join(sentences[start:previous_end])) + 1 if start < previous_end else 0
        if ending:  # the ending joins this chunk
            chunks.append((" ".join(sentences[start:]), repeated))
            break
        chunks.append((" ".join(sentences[start:end]), repeated))
        if end >= len(sentences):
            break
        previous_end = end
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
        Chunk(paper.id, i, text, count(text), repeated)
        for i, (text, repeated) in enumerate(
            chunk_spans(paper.abstract, count, max_tokens, overlap_tokens))
    ]


def join_chunks(texts: Sequence[str], overlaps: Sequence[int]) -> str:
    """The text that chunks of :func:`chunk_spans` were cut from (in order, all of them), each
    chunk's repeated start dropped. For a text with its whitespace collapsed, as every
    abstract is (``corpus.normalize``), this is the text itself. A chunk that is all repeat
    (cut before the chunker left out carried sentences the next one did not fit beside)
    adds nothing."""
    parts = (text[overlap:] if i else text
             for i, (text, overlap) in enumerate(zip(texts, overlaps, strict=True)))
    return " ".join(part for part in parts if part)
