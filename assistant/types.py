"""Typed, immutable results: answers, citations, sources."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any


def reference_label(title: str, title_derived: bool, arxiv_id: str | None,
                    openreview_id: str | None) -> str:
    """How a paper is named under an answer: its title and the best id we have."""
    ids = []
    if title_derived:
        ids.append("derived title")
    if arxiv_id:
        ids.append(f"arXiv {arxiv_id}")
    elif openreview_id:
        ids.append(f"OpenReview {openreview_id}")
    return f"{title} ({'; '.join(ids)})" if ids else title


@dataclass(frozen=True)
class Source:
    """A retrieved paper with its best passages; ``score`` is the fused rank score."""

    paper_id: str
    title: str
    text: str
    score: float
    title_derived: bool = False
    arxiv_id: str | None = None
    openreview_id: str | None = None
    passages: tuple[str, ...] = ()
    chunk_ids: tuple[str, ...] = ()
    dense: float = 0.0
    lexical: float = 0.0
    support: float = 0.0  # how well the paper supports the question (0 to 1): answer/support.py

    @property
    def label(self) -> str:
        return reference_label(self.title, self.title_derived, self.arxiv_id, self.openreview_id)


@dataclass(frozen=True)
class Citation:
    """A paper the answer cites, with the passage that supports the cited sentences."""

    number: int
    paper_id: str
    title: str
    text: str
    title_derived: bool = False
    arxiv_id: str | None = None
    openreview_id: str | None = None
    bibtex: str = ""  # the paper's entry: the original one for a paper read from a .bib file

    @property
    def label(self) -> str:
        return reference_label(self.title, self.title_derived, self.arxiv_id, self.openreview_id)


@dataclass(frozen=True)
class Dropped:
    """A sentence of the model's draft that the checks removed, and why."""

    sentence: str
    reason: str


@dataclass(frozen=True)
class Timings:
    """Seconds spent per stage."""

    retrieve: float = 0.0
    first_token: float | None = None
    total: float = 0.0


@dataclass(frozen=True)
class Usage:
    """Tokens sent to and received from the model (0 when the model was not called)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Answer:
    """The checked answer: ``text`` cites ``citations`` as [n]; ``abstained`` when uncovered."""

    question: str
    text: str
    citations: tuple[Citation, ...]
    sources: tuple[Source, ...]
    abstained: bool
    dropped: tuple[Dropped, ...] = ()
    warnings: tuple[str, ...] = ()
    timings: Timings = field(default_factory=Timings)
    usage: Usage = field(default_factory=Usage)
    model: str = ""

    @property
    def references(self) -> str:
        """The cited titles, one per line, as shown under the answer."""
        return "\n".join(f"[{c.number}] {c.label}" for c in self.citations)

    def bibtex(self) -> str:
        """The BibTeX of the cited papers, one entry each ("" when nothing is cited)."""
        entries = dict.fromkeys(c.bibtex for c in self.citations if c.bibtex)
        return "\n\n".join(entries) + ("\n" if entries else "")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``answer`` is the text)."""
        data = asdict(self)
        data["answer"] = data.pop("text")
        for item in (*data["citations"], *data["sources"]):
            item["label"] = reference_label(
                item["title"], item["title_derived"], item["arxiv_id"], item["openreview_id"]
            )
        return data


class Response:
    """An answer as it is written: iterate over it for the checked text as it comes (each
    piece a ``str``), and read ``.answer`` for the final ``Answer`` (the rest is read first
    if need be). Iterating again replays the text. ``close()`` stops the model mid-answer.
    (As simonw/llm's ``Response``.)"""

    def __init__(self, pieces: Iterator[str | Answer]) -> None:
        self._pieces = pieces
        self._chunks: list[str] = []
        self._answer: Answer | None = None
        self._error: Exception | None = None
        self._done = False

    def _pull(self) -> None:
        if self._error is not None:
            raise self._error  # the answer failed: it fails the same way when asked again
        try:
            piece = next(self._pieces)
        except StopIteration:
            self._done = True
            if self._answer is None:
                raise RuntimeError("the answer stream ended without an Answer") from None
            return
        except Exception as exc:
            self._error = exc
            raise
        if isinstance(piece, Answer):
            self._answer = piece
        else:
            self._chunks.append(piece)

    def __iter__(self) -> Iterator[str]:
        shown = 0
        while True:
            if shown < len(self._chunks):
                shown += 1
                yield self._chunks[shown - 1]
            elif self._done:
                return
            else:
                self._pull()

    @property
    def done(self) -> bool:
        """Whether the whole answer has been read."""
        return self._done

    @property
    def answer(self) -> Answer:
        """The final, checked ``Answer``."""
        while not self._done:
            self._pull()
        assert self._answer is not None
        return self._answer

    def text(self) -> str:
        """The whole answer's text."""
        return self.answer.text

    def close(self) -> None:
        """Stop reading: the model stops writing and is free for the next question."""
        close = getattr(self._pieces, "close", None)
        if close is not None:
            close()
        self._done = self._done or self._answer is not None

    def __enter__(self) -> Response:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
